package arn

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/domain"
)

func TestParseTarget(t *testing.T) {
	ok := []struct {
		typ  domain.EndpointType
		in   string
		want ARN
	}{
		{domain.TypeSQS, "arn:aws:sqs:eu-west-1:123456789012:orders", ARN{"aws", "sqs", "eu-west-1", "123456789012", "orders"}},
		{domain.TypeSQS, "arn:aws-cn:sqs:cn-north-1:123456789012:a_b-" + strings.Repeat("q", 76), ARN{"aws-cn", "sqs", "cn-north-1", "123456789012", "a_b-" + strings.Repeat("q", 76)}},
		{domain.TypeSNS, "arn:aws:sns:us-gov-west-1:123456789012:hooks", ARN{"aws", "sns", "us-gov-west-1", "123456789012", "hooks"}},
		{domain.TypeEventBridge, "arn:aws:events:us-east-1:123456789012:event-bus/default", ARN{"aws", "events", "us-east-1", "123456789012", "event-bus/default"}},
		{domain.TypeEventBridge, "arn:aws:events:us-east-1:123456789012:event-bus/aws.partner/x.com/1/y", ARN{"aws", "events", "us-east-1", "123456789012", "event-bus/aws.partner/x.com/1/y"}},
	}
	for _, c := range ok {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseTarget(c.typ, c.in)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
			require.Equal(t, c.in, got.String())
		})
	}
	bad := []struct {
		typ      domain.EndpointType
		in, want string
	}{
		{domain.TypeHTTP, "arn:aws:sqs:eu-west-1:123456789012:q", "has no ARN target"},
		{domain.TypeSQS, "https://sqs.eu-west-1.amazonaws.com/123456789012/q", "is not an ARN"},
		{domain.TypeSQS, "arn:aws:sqs:eu-west-1:123456789012", "is not an ARN"},
		{domain.TypeSQS, "arn:azure:sqs:eu-west-1:123456789012:q", "partition"},
		{domain.TypeSQS, "arn:aws:sns:eu-west-1:123456789012:q", "not sns"},
		{domain.TypeSQS, "arn:aws:sqs::123456789012:q", "region"},
		{domain.TypeSQS, "arn:aws:sqs:EU-WEST-1:123456789012:q", "region"},
		{domain.TypeSQS, "arn:aws:sqs:eu-west-1:12345678901:q", "12-digit"},
		{domain.TypeSQS, "arn:aws:sqs:eu-west-1:*:q", "12-digit"},
		{domain.TypeSQS, "arn:aws:sqs:eu-west-1:123456789012:", "queue name"},
		{domain.TypeSQS, "arn:aws:sqs:eu-west-1:123456789012:" + strings.Repeat("q", 81), "queue name"},
		{domain.TypeSQS, "arn:aws:sqs:eu-west-1:123456789012:a.b", "queue name"},
		{domain.TypeSQS, "arn:aws:sqs:eu-west-1:123456789012:*", "queue name"},
		{domain.TypeSQS, "arn:aws:sqs:eu-west-1:123456789012:orders.fifo", "FIFO"},
		{domain.TypeSNS, "arn:aws:sns:eu-west-1:123456789012:hooks.fifo", "FIFO"},
		{domain.TypeSNS, "arn:aws:sns:eu-west-1:123456789012:a:b", "topic name"},
		{domain.TypeSNS, "arn:aws:sns:eu-west-1:123456789012:" + strings.Repeat("t", 257), "topic name"},
		{domain.TypeEventBridge, "arn:aws:events:eu-west-1:123456789012:rule/r", "event-bus/NAME"},
		{domain.TypeEventBridge, "arn:aws:events:eu-west-1:123456789012:event-bus/", "event-bus/NAME"},
		{domain.TypeEventBridge, "arn:aws:events:eu-west-1:123456789012:event-bus/a b", "event-bus/NAME"},
		{domain.TypeEventBridge, "arn:aws:sqs:eu-west-1:123456789012:event-bus/b", "not sqs"},
		{domain.TypeSQS, "arn:aws:sqs:eu-west-1:123456789012:" + strings.Repeat("q", 3000), "too long"},
	}
	for _, c := range bad {
		t.Run(c.want+" "+c.in[:min(len(c.in), 60)], func(t *testing.T) {
			_, err := ParseTarget(c.typ, c.in)
			require.ErrorContains(t, err, c.want)
		})
	}
}

func TestParseRole(t *testing.T) {
	for _, in := range []string{
		"arn:aws:iam::123456789012:role/hookline-delivery",
		"arn:aws:iam::123456789012:role/service/hooks/Hook+Line=,.@_-",
		"arn:aws-us-gov:iam::123456789012:role/" + strings.Repeat("r", 64),
	} {
		a, err := ParseRole(in)
		require.NoError(t, err, in)
		require.Equal(t, in, a.String())
		require.Equal(t, "iam", a.Service)
	}
	a, _ := ParseRole("arn:aws:iam::123456789012:role/service/hooks/deliver")
	require.Equal(t, "deliver", a.Name())
	for in, want := range map[string]string{
		"hookline-delivery":                                                 "is not an ARN",
		"arn:aws:sts::123456789012:assumed-role/r/s":                        "not sts",
		"arn:aws:iam:us-east-1:123456789012:role/r":                         "no region",
		"arn:aws:iam::123456789012:user/r":                                  "not a role",
		"arn:aws:iam::123456789012:role/":                                   "role name",
		"arn:aws:iam::123456789012:role/a b":                                "role name",
		"arn:aws:iam::123456789012:role/" + strings.Repeat("r", 65):         "role name",
		"arn:aws:iam::123456789012:role/pa th/r":                            "role path",
		"arn:aws:iam::123456789012:role/" + strings.Repeat("p", 520) + "/r": "role path",
		"arn:aws:iam::12345678901x:role/r":                                  "12-digit",
	} {
		_, err := ParseRole(in)
		require.ErrorContains(t, err, want, in)
	}
}

// The patterns compile on first use, not at init: each must compile, or
// the first check that needs it would panic instead of the package's init.
func TestEveryPatternCompiles(t *testing.T) {
	for name, p := range map[string]pattern{
		"partition": partitionRE, "region": regionRE, "account": accountRE, "role path": rolePathRE,
		"queue": queueRE.re, "topic": topicRE.re, "bus": busRE.re, "role name": roleNameRE.re,
	} {
		require.NotPanics(t, func() { require.NotNil(t, p()) }, name)
	}
	require.True(t, queueRE.MatchString(strings.Repeat("q", 80)))
	require.False(t, queueRE.MatchString(strings.Repeat("q", 81)), "the bound is a length check")
}

// Like matches as IAM's ArnLike: part by part, * across slashes but not
// colons, ? one character, case sensitive.
func TestLike(t *testing.T) {
	for _, c := range []struct {
		pattern, arn string
		want         bool
	}{
		{"arn:aws:iam::*:role/hookline-*", "arn:aws:iam::222222222222:role/hookline-delivery", true},
		{"arn:aws:iam::*:role/hookline-*", "arn:aws:iam::222222222222:role/hookline-", true},
		{"arn:aws:iam::*:role/hookline-*", "arn:aws:iam::222222222222:role/Hookline-delivery", false},
		{"arn:aws:iam::*:role/hookline-*", "arn:aws:iam::222222222222:role/team/hookline-delivery", false},
		{"arn:aws:iam::*:role/hookline-*", "arn:aws:iam::222222222222:role/admin", false},
		{"arn:aws:iam::*:role/hookline-*", "arn:aws-cn:iam::222222222222:role/hookline-x", false},
		{"arn:aws:iam::*:role/*", "arn:aws:iam::222222222222:role/team/admin", true},
		{"arn:aws:iam::111122223333:role/hookline-*", "arn:aws:iam::444455556666:role/hookline-x", false},
		{"arn:aws:iam::1111222233?3:role/a*b*c", "arn:aws:iam::111122223333:role/aXbYbZc", true},
		{"arn:aws:iam::*:role/a*b*c", "arn:aws:iam::111122223333:role/aXbYbZ", false},
		{"arn:aws:iam::*:*", "arn:aws:iam::111122223333:role/x", true},
		{"*", "arn:aws:iam::111122223333:role/x", false},
		{"arn:aws:iam::*:role/x", "not an arn", false},
	} {
		require.Equal(t, c.want, Like(c.pattern, c.arn), "%s ~ %s", c.pattern, c.arn)
	}
}
