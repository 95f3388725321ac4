package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/hookline/hookline/internal/domain"
)

// Customer is a customer's account on the local cloud, as an AWS
// destination's owner sets it up (docs/destinations.md): a queue hookline
// sends to, a topic and a bus hookline publishes to (each forwarding to a
// queue of its own that the test reads), and the role hookline assumes.
type Customer struct {
	Name     string
	QueueARN string
	QueueURL string
	TopicARN string
	BusARN   string
	RoleARN  string

	// inbox is the queue each type's messages arrive on.
	inbox map[domain.EndpointType]string
	sqs   *sqs.Client
	sns   *sns.Client
	eb    *eventbridge.Client
	iam   *iam.Client
	ruleName,
	subscription string
	account string
}

// NewCustomer creates a customer named name (a prefix of every resource's
// name; it must not begin with the stack's name, which hookline refuses).
func (e *Env) NewCustomer(ctx context.Context, name string) (*Customer, error) {
	c := &Customer{Name: name, inbox: map[domain.EndpointType]string{},
		sqs: sqs.NewFromConfig(e.AWS), sns: sns.NewFromConfig(e.AWS), eb: eventbridge.NewFromConfig(e.AWS), iam: iam.NewFromConfig(e.AWS)}
	id, err := sts.NewFromConfig(e.AWS).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return nil, fmt.Errorf("customer %s: caller identity: %w", name, err)
	}
	c.account = aws.ToString(id.Account)
	for _, step := range []func(context.Context) error{c.createQueues, c.createTopic, c.createBus, c.createRole} {
		if err := step(ctx); err != nil {
			return nil, errors.Join(fmt.Errorf("customer %s: %w", name, err), c.Delete(ctx))
		}
	}
	return c, nil
}

// Target is the ARN an endpoint of type t delivers to.
func (c *Customer) Target(t domain.EndpointType) string {
	switch t {
	case domain.TypeSNS:
		return c.TopicARN
	case domain.TypeEventBridge:
		return c.BusARN
	default:
		return c.QueueARN
	}
}

func (c *Customer) createQueue(ctx context.Context, name string) (url, arn string, err error) {
	q, err := c.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
	if err != nil {
		return "", "", fmt.Errorf("create queue %s: %w", name, err)
	}
	a, err := c.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", "", fmt.Errorf("queue %s arn: %w", name, err)
	}
	return aws.ToString(q.QueueUrl), a.Attributes["QueueArn"], nil
}

// createQueues makes the queue hookline sends to and the two the topic and
// the bus forward to.
func (c *Customer) createQueues(ctx context.Context) error {
	url, arn, err := c.createQueue(ctx, c.Name+"-orders")
	if err != nil {
		return err
	}
	c.QueueURL, c.QueueARN, c.inbox[domain.TypeSQS] = url, arn, url
	for t, suffix := range map[domain.EndpointType]string{domain.TypeSNS: "-from-topic", domain.TypeEventBridge: "-from-bus"} {
		if c.inbox[t], _, err = c.createQueue(ctx, c.Name+suffix); err != nil {
			return err
		}
	}
	return nil
}

// allowService lets service (sns or events) send to the inbox of type t from
// source, the policy a customer puts on such a queue.
func (c *Customer) allowService(ctx context.Context, t domain.EndpointType, service, source string) error {
	url := c.inbox[t]
	arn, err := c.queueARN(ctx, t)
	if err != nil {
		return err
	}
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"%s.amazonaws.com"},"Action":"sqs:SendMessage","Resource":"%s","Condition":{"ArnEquals":{"aws:SourceArn":"%s"}}}]}`,
		service, arn, source)
	_, err = c.sqs.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: map[string]string{"Policy": policy}})
	if err != nil {
		return fmt.Errorf("queue policy for %s: %w", service, err)
	}
	return nil
}

func (c *Customer) queueARN(ctx context.Context, t domain.EndpointType) (string, error) {
	url := c.inbox[t]
	a, err := c.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", err
	}
	return a.Attributes["QueueArn"], nil
}

// createTopic makes the topic with a raw-delivery subscription of its
// inbox, so the message attributes arrive as SQS message attributes.
func (c *Customer) createTopic(ctx context.Context) error {
	t, err := c.sns.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(c.Name + "-orders")})
	if err != nil {
		return fmt.Errorf("create topic: %w", err)
	}
	c.TopicARN = aws.ToString(t.TopicArn)
	if err := c.allowService(ctx, domain.TypeSNS, "sns", c.TopicARN); err != nil {
		return err
	}
	arn, err := c.queueARN(ctx, domain.TypeSNS)
	if err != nil {
		return err
	}
	s, err := c.sns.Subscribe(ctx, &sns.SubscribeInput{TopicArn: t.TopicArn, Protocol: aws.String("sqs"), Endpoint: &arn,
		Attributes: map[string]string{"RawMessageDelivery": "true"}, ReturnSubscriptionArn: true})
	if err != nil {
		return fmt.Errorf("subscribe the topic's queue: %w", err)
	}
	c.subscription = aws.ToString(s.SubscriptionArn)
	return nil
}

// createBus makes the bus and a rule that sends every hookline event on it
// to its inbox.
func (c *Customer) createBus(ctx context.Context) error {
	b, err := c.eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String(c.Name + "-orders")})
	if err != nil {
		return fmt.Errorf("create bus: %w", err)
	}
	c.BusARN = aws.ToString(b.EventBusArn)
	c.ruleName = c.Name + "-hookline"
	// By name: ministack (1.5.33) takes no bus ARN here; AWS takes either.
	bus := aws.String(c.Name + "-orders")
	r, err := c.eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: &c.ruleName, EventBusName: bus,
		EventPattern: aws.String(`{"source":["hookline"]}`)})
	if err != nil {
		return fmt.Errorf("put rule: %w", err)
	}
	if err := c.allowService(ctx, domain.TypeEventBridge, "events", aws.ToString(r.RuleArn)); err != nil {
		return err
	}
	arn, err := c.queueARN(ctx, domain.TypeEventBridge)
	if err != nil {
		return err
	}
	_, err = c.eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: &c.ruleName, EventBusName: bus,
		Targets: []ebtypes.Target{{Id: aws.String("inbox"), Arn: &arn}}})
	if err != nil {
		return fmt.Errorf("put target: %w", err)
	}
	return nil
}

// roleName is the customer's role's name: it begins with hookline-, as
// the deployment's default destinationRoles (hookline-*) requires.
func (c *Customer) roleName() string { return "hookline-" + c.Name }

// createRole makes the role hookline assumes, with the permissions policy
// of docs/destinations.md, trusting no external id until Trust.
func (c *Customer) createRole(ctx context.Context) error {
	r, err := c.iam.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(c.roleName()),
		AssumeRolePolicyDocument: aws.String(c.trustPolicy())})
	if err != nil {
		return fmt.Errorf("create role: %w", err)
	}
	c.RoleARN = aws.ToString(r.Role.Arn)
	perms := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[`+
		`{"Effect":"Allow","Action":"sqs:SendMessage","Resource":"%s"},`+
		`{"Effect":"Allow","Action":"sns:Publish","Resource":"%s"},`+
		`{"Effect":"Allow","Action":"events:PutEvents","Resource":"%s"}]}`, c.QueueARN, c.TopicARN, c.BusARN)
	_, err = c.iam.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: r.Role.RoleName,
		PolicyName: aws.String("hookline-delivery"), PolicyDocument: &perms})
	if err != nil {
		return fmt.Errorf("role policy: %w", err)
	}
	return nil
}

// trustPolicy lets the stack's account assume the role with one of the
// external ids (none: no one).
func (c *Customer) trustPolicy(externalIDs ...string) string {
	ids, _ := json.Marshal(externalIDs)
	if len(externalIDs) == 0 {
		ids = []byte(`["-none-"]`)
	}
	return fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::%s:root"},`+
		`"Action":"sts:AssumeRole","Condition":{"StringEquals":{"sts:ExternalId":%s}}}]}`, c.account, ids)
}

// Trust sets the role's trust policy to require one of externalIDs (the
// ones hookline answered when each endpoint was created).
func (c *Customer) Trust(ctx context.Context, externalIDs ...string) error {
	_, err := c.iam.UpdateAssumeRolePolicy(ctx, &iam.UpdateAssumeRolePolicyInput{
		RoleName: aws.String(c.roleName()), PolicyDocument: aws.String(c.trustPolicy(externalIDs...))})
	if err != nil {
		return fmt.Errorf("customer %s: trust: %w", c.Name, err)
	}
	return nil
}

// Received is one message as the customer's consumer reads it: the
// Standard Webhooks values hookline sent beside the body.
type Received struct {
	WebhookID, Timestamp, Signature string
	EventID, EventType              string
	Attempt                         int
	Body                            string
}

// Header is r's Standard Webhooks values as the headers an HTTP receiver
// would have had, for a verifier.
func (r Received) Header() http.Header {
	h := http.Header{}
	h.Set("webhook-id", r.WebhookID)
	h.Set("webhook-timestamp", r.Timestamp)
	h.Set("webhook-signature", r.Signature)
	return h
}

// Receive reads (and deletes) what endpoints of type t delivered, until n
// messages have come or wait has passed.
func (c *Customer) Receive(ctx context.Context, t domain.EndpointType, n int, wait time.Duration) ([]Received, error) {
	url, ok := c.inbox[t]
	if !ok {
		return nil, fmt.Errorf("customer %s: no inbox for type %q", c.Name, t)
	}
	var got []Received
	for deadline := time.Now().Add(wait); len(got) < n && time.Now().Before(deadline); {
		out, err := c.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10,
			WaitTimeSeconds: 1, MessageAttributeNames: []string{"All"}})
		if err != nil {
			return got, fmt.Errorf("customer %s: receive: %w", c.Name, err)
		}
		for _, m := range out.Messages {
			r, err := decode(t, m)
			if err != nil {
				return got, fmt.Errorf("customer %s: %w", c.Name, err)
			}
			got = append(got, r)
			if _, err := c.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle}); err != nil {
				return got, fmt.Errorf("customer %s: delete: %w", c.Name, err)
			}
		}
	}
	return got, nil
}

// decode reads a message of type t: the attributes of an SQS or SNS
// message, the detail of an EventBridge event.
func decode(t domain.EndpointType, m sqstypes.Message) (Received, error) {
	if t == domain.TypeEventBridge {
		return decodeEvent(aws.ToString(m.Body))
	}
	attr := func(name string) string { return aws.ToString(m.MessageAttributes[name].StringValue) }
	r := Received{WebhookID: attr("webhook-id"), Timestamp: attr("webhook-timestamp"), Signature: attr("webhook-signature"),
		EventID: attr("hookline-event-id"), EventType: attr("hookline-event-type"), Body: aws.ToString(m.Body)}
	r.Attempt, _ = strconv.Atoi(attr("hookline-attempt"))
	if r.WebhookID == "" {
		return r, fmt.Errorf("a %s message without webhook-id: attributes %v", t, keys(m.MessageAttributes))
	}
	return r, nil
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// decodeEvent reads an EventBridge event's detail (docs/destinations.md).
func decodeEvent(body string) (Received, error) {
	var ev struct {
		Source string                     `json:"source"`
		Detail map[string]json.RawMessage `json:"detail"`
	}
	if err := json.Unmarshal([]byte(body), &ev); err != nil {
		return Received{}, fmt.Errorf("an event that is not JSON: %w", err)
	}
	field := func(name string) string {
		var s string
		if json.Unmarshal(ev.Detail[name], &s) == nil {
			return s
		}
		return strings.TrimSpace(string(ev.Detail[name]))
	}
	r := Received{WebhookID: field("webhook-id"), Timestamp: field("webhook-timestamp"), Signature: field("webhook-signature"),
		EventID: field("hookline-event-id"), EventType: field("hookline-event-type"), Body: field("body")}
	r.Attempt, _ = strconv.Atoi(field("hookline-attempt"))
	if ev.Source != "hookline" || r.WebhookID == "" {
		return r, fmt.Errorf("an event from %q without webhook-id: %.300s", ev.Source, body)
	}
	return r, nil
}

// Delete removes the customer's resources (those that were made).
func (c *Customer) Delete(ctx context.Context) error {
	var errs []error
	keep := func(_ any, err error) { errs = append(errs, err) }
	if c.subscription != "" {
		keep(c.sns.Unsubscribe(ctx, &sns.UnsubscribeInput{SubscriptionArn: &c.subscription}))
	}
	if c.TopicARN != "" {
		keep(c.sns.DeleteTopic(ctx, &sns.DeleteTopicInput{TopicArn: &c.TopicARN}))
	}
	if c.ruleName != "" {
		bus := aws.String(c.Name + "-orders")
		keep(c.eb.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: &c.ruleName, EventBusName: bus, Ids: []string{"inbox"}}))
		keep(c.eb.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: &c.ruleName, EventBusName: bus}))
	}
	if c.BusARN != "" {
		keep(c.eb.DeleteEventBus(ctx, &eventbridge.DeleteEventBusInput{Name: aws.String(c.Name + "-orders")}))
	}
	if c.RoleARN != "" {
		role := aws.String(c.roleName())
		keep(c.iam.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: role, PolicyName: aws.String("hookline-delivery")}))
		keep(c.iam.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: role}))
	}
	for _, url := range c.inbox {
		keep(c.sqs.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(url)}))
	}
	return errors.Join(errs...)
}
