//go:build e2e

package destcloud

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/boot"
	"github.com/hookline/hookline/internal/destination"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/sender"
	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/tooling/harness"
	"github.com/hookline/hookline/verify"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func setup(t *testing.T) (aws.Config, *harness.Customer) {
	t.Helper()
	if os.Getenv("AWS_ENDPOINT_URL") == "" {
		t.Fatal("AWS_ENDPOINT_URL is not set: the tests talk to a local cloud only (source scripts/env.sh)")
	}
	// The deliver function's own configuration, as boot makes it.
	cfg, err := boot.AWSConfig(os.Getenv)
	require.NoError(t, err)
	ctx := context.Background()
	c, err := (&harness.Env{AWS: cfg}).NewCustomer(ctx, fmt.Sprintf("destcloud-%d", time.Now().UnixNano()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Delete(context.Background()) })
	return cfg, c
}

// TestSenderDeliversOnTheLocalCloud: STS AssumeRole, SQS SendMessage with
// attributes, SNS Publish to a raw-delivery SQS subscription, EventBridge
// PutEvents through a rule to an SQS target, each read by the customer's
// consumer and verified with the verify module.
func TestSenderDeliversOnTheLocalCloud(t *testing.T) {
	cfg, c := setup(t)
	ctx := context.Background()
	const ext = "hlx_destcloud_external_id"
	require.NoError(t, c.Trust(ctx, ext))
	s, err := destination.New(cfg, destination.Options{RequestTimeout: 5 * time.Second,
		// The local cloud evaluates no trust policy: every role would
		// look unguarded (TestLocalCloudForgives).
		NoProbe: true})
	require.NoError(t, err)
	signer, err := signing.NewSigner(secret)
	require.NoError(t, err)
	v, err := verify.New(secret)
	require.NoError(t, err)
	for i, typ := range []domain.EndpointType{domain.TypeSQS, domain.TypeSNS, domain.TypeEventBridge} {
		t.Run(string(typ), func(t *testing.T) {
			body := fmt.Sprintf(`{"id":"evt_%d","type":"order.created","timestamp":"2026-12-03T08:00:00Z","data":{"n":%d,"s":"<&>\"é"}}`, i, i)
			r := sender.Request{DeliveryID: fmt.Sprintf("msg_destcloud_%d", i), EventID: fmt.Sprintf("evt_%d", i), EventType: "order.created",
				Attempt: 1, Body: []byte(body), Signer: signer,
				Destination: &sender.Destination{Type: typ, ARN: c.Target(typ), RoleARN: c.RoleARN, ExternalID: ext}}
			res := s.Send(ctx, r)
			require.Equal(t, sender.Delivered, res.Outcome, "%+v", res)
			got, err := c.Receive(ctx, typ, 1, 15*time.Second)
			require.NoError(t, err)
			require.Len(t, got, 1)
			require.Equal(t, body, got[0].Body, "the exact signed bytes")
			require.Equal(t, r.DeliveryID, got[0].WebhookID)
			require.Equal(t, "order.created", got[0].EventType)
			require.Equal(t, 1, got[0].Attempt)
			require.NoError(t, v.Verify(got[0].Header(), []byte(got[0].Body)))
		})
	}
}

func code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	if err != nil {
		return err.Error()
	}
	return "accepted"
}

// TestLocalCloudForgives records, against the pinned local cloud, the AWS
// rules of the AWS destinations it does not enforce (docs/local-cloud.md):
// each is held by a unit-test fake instead. A rule the local cloud starts
// enforcing shows here as a change to make in the docs.
func TestLocalCloudForgives(t *testing.T) {
	cfg, c := setup(t)
	ctx := context.Background()
	require.NoError(t, c.Trust(ctx, "the-right-one"))
	st := sts.NewFromConfig(cfg)
	assume := func(role, ext string, dur int32, name string) string {
		_, err := st.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: &role, ExternalId: &ext, DurationSeconds: &dur, RoleSessionName: &name})
		return code(err)
	}
	seen := map[string]string{
		"AssumeRole with another external id":               assume(c.RoleARN, "another-one", 3600, "hookline-delivery"),
		"AssumeRole of a role that does not exist":          assume(strings.Replace(c.RoleARN, "destcloud", "nobody", 1), "the-right-one", 3600, "hookline-delivery"),
		"AssumeRole for 7200 s by a role session (chained)": assume(c.RoleARN, "the-right-one", 7200, "hookline-delivery"),
		"AssumeRole for 899 s":                              assume(c.RoleARN, "the-right-one", 899, "hookline-delivery"),
		"AssumeRole with a session name of 1 character":     assume(c.RoleARN, "the-right-one", 3600, "s"),
		"AssumeRole with an external id of 1 character":     assume(c.RoleARN, "x", 3600, "hookline-delivery"),
	}
	sn := sns.NewFromConfig(cfg)
	attrs := map[string]snstypes.MessageAttributeValue{}
	for i := range 11 {
		attrs[fmt.Sprintf("a%d", i)] = snstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String("v")}
	}
	_, err := sn.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(c.TopicARN), Message: aws.String("{}"), MessageAttributes: attrs})
	seen["SNS Publish with 11 attributes"] = code(err)
	_, err = sn.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(c.TopicARN), Message: aws.String(strings.Repeat("x", 256<<10+1))})
	seen["SNS Publish of 256 KiB + 1"] = code(err)
	_, err = sn.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(c.TopicARN + "-gone"), Message: aws.String("{}")})
	seen["SNS Publish to a topic that does not exist"] = code(err)
	q := sqs.NewFromConfig(cfg)
	sqsAttrs := map[string]sqstypes.MessageAttributeValue{}
	for i := range 11 {
		sqsAttrs[fmt.Sprintf("a%d", i)] = sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String("v")}
	}
	_, err = q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(c.QueueURL), MessageBody: aws.String("{}"), MessageAttributes: sqsAttrs})
	seen["SQS SendMessage with 11 attributes"] = code(err)
	_, err = q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(c.QueueURL), MessageBody: aws.String("{}"),
		MessageAttributes: map[string]sqstypes.MessageAttributeValue{"AWS.reserved": {DataType: aws.String("String"), StringValue: aws.String("v")}}})
	seen["SQS SendMessage with an attribute named AWS.reserved"] = code(err)
	eb := eventbridge.NewFromConfig(cfg)
	put := func(e ebtypes.PutEventsRequestEntry) string {
		out, err := eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{e}})
		if err == nil && out.FailedEntryCount > 0 {
			return "entry " + aws.ToString(out.Entries[0].ErrorCode)
		}
		return code(err)
	}
	entry := func(detail string) ebtypes.PutEventsRequestEntry {
		return ebtypes.PutEventsRequestEntry{Source: aws.String("hookline"), DetailType: aws.String("t"), Detail: &detail, EventBusName: aws.String(c.BusARN)}
	}
	seen["PutEvents of an entry over 256 KiB"] = put(entry(`{"a":"` + strings.Repeat("x", 256<<10) + `"}`))
	seen["PutEvents with a Detail that is not an object"] = put(entry(`[1]`))
	gone := entry(`{}`)
	gone.EventBusName = aws.String(c.BusARN + "-gone")
	seen["PutEvents to a bus that does not exist"] = put(gone)
	for rule, answer := range seen {
		t.Logf("%-52s -> %s", rule, answer)
	}
	// The paths the sender depends on work; the rest is recorded above.
	require.Equal(t, "accepted", assume(c.RoleARN, "the-right-one", 3600, "hookline-delivery"))
}
