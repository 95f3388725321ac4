package stsfake_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/fakes/awsfake"
	"github.com/hookline/hookline/internal/fakes/stsfake"
)

const (
	caller = "arn:aws:iam::111111111111:role/deliver"
	role   = "arn:aws:iam::222222222222:role/target"
)

func setup(t *testing.T) (*stsfake.Fake, *sts.Client) {
	f := stsfake.New(stsfake.Config{})
	f.AddCaller("AKIALAMBDA", stsfake.Caller{RoleARN: caller, Session: true})
	f.AddCaller("AKIAUSER", stsfake.Caller{RoleARN: "arn:aws:iam::111111111111:role/admin"})
	f.AddRole(stsfake.Role{ARN: role, Trusted: []string{caller, "arn:aws:iam::111111111111:root"}, ExternalID: "ext-123", MaxDuration: 7200,
		Allow: map[string][]string{"sqs:SendMessage": {"arn:aws:sqs:eu-west-1:222222222222:q"}}})
	srv := awsfake.Serve(t, map[string]http.Handler{"sts": f})
	cfg := srv.Config("AKIALAMBDA")
	cfg.RetryMaxAttempts = 1
	return f, sts.NewFromConfig(cfg)
}

func code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func assume(c *sts.Client, name, ext string, dur int32, key string) (*sts.AssumeRoleOutput, error) {
	in := &sts.AssumeRoleInput{RoleArn: aws.String(role), RoleSessionName: aws.String(name), DurationSeconds: aws.Int32(dur)}
	if ext != "" {
		in.ExternalId = aws.String(ext)
	}
	return c.AssumeRole(context.Background(), in, func(o *sts.Options) {
		if key != "" {
			o.Credentials = awsfake.StaticCredentials(key)
		}
	})
}

func TestAssumeRole(t *testing.T) {
	t.Parallel()
	f, c := setup(t)
	out, err := assume(c, "hookline-delivery", "ext-123", 3600, "")
	require.NoError(t, err)
	key := aws.ToString(out.Credentials.AccessKeyId)
	require.WithinDuration(t, time.Now().Add(time.Hour), *out.Credentials.Expiration, 2*time.Second)
	require.Equal(t, "arn:aws:sts::222222222222:assumed-role/target/hookline-delivery", aws.ToString(out.AssumedRoleUser.Arn))
	seen, ok := f.AssumedRoleARN(key)
	require.True(t, ok)
	require.Equal(t, aws.ToString(out.AssumedRoleUser.Arn), seen, "what the role's CloudTrail shows for the session's calls")
	p, ok := f.Principal(key)
	require.True(t, ok)
	require.Equal(t, role, p)
	require.True(t, f.Allowed(key, "sqs:SendMessage", "arn:aws:sqs:eu-west-1:222222222222:q"))
	require.False(t, f.Allowed(key, "sqs:SendMessage", "arn:aws:sqs:eu-west-1:222222222222:other"))
	require.False(t, f.Allowed("AKIALAMBDA", "sqs:SendMessage", "arn:aws:sqs:eu-west-1:222222222222:q"), "the caller's own key is not the role's")
	// Not chained: up to the role's maximum.
	_, err = assume(c, "admin", "ext-123", 7200, "AKIAUSER")
	require.NoError(t, err)
}

func TestAssumeRoleRules(t *testing.T) {
	t.Parallel()
	f, c := setup(t)
	for _, r := range []struct {
		name, session, ext, key string
		dur                     int32
		want                    string
	}{
		{"chained over an hour", "s1", "ext-123", "", 3601, "ValidationError"},
		{"under 15 minutes", "s1", "ext-123", "", 899, "ValidationError"},
		{"over the role's maximum", "s1", "ext-123", "AKIAUSER", 7201, "ValidationError"},
		{"session name of one character", "s", "ext-123", "", 900, "ValidationError"},
		{"session name of 65", strings.Repeat("s", 65), "ext-123", "", 900, "ValidationError"},
		{"session name with a space", "a b", "ext-123", "", 900, "ValidationError"},
		{"session name with a slash", "hookline-ep/1", "ext-123", "", 900, "ValidationError"},
		{"session name with a colon", "hookline:ep_1", "ext-123", "", 900, "ValidationError"},
		{"session name with a non-ASCII letter", "hookline-é", "ext-123", "", 900, "ValidationError"},
		{"session name empty", "", "ext-123", "", 900, "ValidationError"},
		{"session name of 64, every character allowed", "Az09_+=,.@-" + strings.Repeat("s", 53), "ext-123", "", 900, ""},
		{"session name of 2", "s1", "ext-123", "", 900, ""},
		{"external id of one character", "s1", "e", "", 900, "ValidationError"},
		{"external id of 1225", "s1", strings.Repeat("e", 1225), "", 900, "ValidationError"},
		{"another external id", "s1", "ext-999", "", 900, "AccessDenied"},
		{"no external id", "s1", "", "", 900, "AccessDenied"},
		{"unknown caller", "s1", "ext-123", "AKIANOBODY", 900, "InvalidClientTokenId"},
	} {
		t.Run(r.name, func(t *testing.T) {
			_, err := assume(c, r.session, r.ext, r.dur, r.key)
			require.Equal(t, r.want, code(err), "%v", err)
		})
	}
	f.AddRole(stsfake.Role{ARN: role, Trusted: []string{"333333333333"}})
	_, err := assume(c, "s1", "", 900, "")
	require.Equal(t, "AccessDenied", code(err), "the trust policy does not name the caller")
}

// STS checks an external ID only where the trust policy has an
// sts:ExternalId condition: a role without one is granted with any
// external ID, or none (what hookline's probe finds out).
func TestAssumeRoleWithoutExternalIDCondition(t *testing.T) {
	t.Parallel()
	f, c := setup(t)
	f.AddRole(stsfake.Role{ARN: role, Trusted: []string{caller}})
	for _, ext := range []string{"", "hookline-probe-0123456789abcdef", "ext-123"} {
		_, err := assume(c, "hookline-probe", ext, 900, "")
		require.NoError(t, err, "external id %q", ext)
	}
}

// A session policy narrows the session: the role and the policy must both
// allow, and an explicit Deny in the policy wins.
func TestSessionPolicy(t *testing.T) {
	t.Parallel()
	fake, c := setup(t)
	q := "arn:aws:sqs:eu-west-1:222222222222:q"
	withPolicy := func(policy string) (string, error) {
		out, err := c.AssumeRole(context.Background(), &sts.AssumeRoleInput{RoleArn: aws.String(role), RoleSessionName: aws.String("s1"),
			ExternalId: aws.String("ext-123"), DurationSeconds: aws.Int32(900), Policy: aws.String(policy)})
		if err != nil {
			return "", err
		}
		return aws.ToString(out.Credentials.AccessKeyId), nil
	}
	for _, tc := range []struct {
		name, policy string
		allowed      bool
	}{
		{"allows the send", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["sqs:SendMessage"],"Resource":"*"}]}`, true},
		{"allows another action only", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sns:Publish","Resource":"*"}]}`, false},
		{"denies the queue", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sqs:SendMessage","Resource":"*"},{"Effect":"Deny","Action":"*","Resource":["` + q + `"]}]}`, false},
		{"denies another queue", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sqs:SendMessage","Resource":"*"},{"Effect":"Deny","Action":"*","Resource":["` + q + `x"]}]}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, err := withPolicy(tc.policy)
			require.NoError(t, err)
			require.Equal(t, tc.allowed, fake.Allowed(key, "sqs:SendMessage", q))
		})
	}
	_, err := withPolicy(`{"Statement":[{"Effect":"Allow","Action":"*","Resource":"` + strings.Repeat("a", 2048) + `"}]}`)
	require.Equal(t, "ValidationError", code(err))
	_, err = withPolicy(`not a policy`)
	require.Equal(t, "MalformedPolicyDocument", code(err))
}
