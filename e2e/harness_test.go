//go:build e2e

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/internal/stackoutputs"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/outbox"
	"github.com/hookline/hookline/tooling/harness"
	"github.com/stretchr/testify/require"
)

// env is the deployed stack and clients to reach it, shared by every test.
var env struct {
	out         stackoutputs.Outputs
	cfg         aws.Config
	endpointURL string
	ddb         *dynamodb.Client
	sqs         *sqs.Client
	lambda      *lambda.Client
	store       *store.Store
	kms         *kms.Client
	// sealer seals signing secrets under the stack's key, as the api
	// function does.
	sealer *sealing.Sealer
}

func TestMain(m *testing.M) {
	if err := setup(); err != nil {
		// Loud, never a skip: CI must not pass without the local cloud.
		fmt.Fprintln(os.Stderr, "e2e: cannot reach the deployed stack:", err)
		fmt.Fprintln(os.Stderr, "e2e: run `make test` (or `make deploy-local` first)")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func setup() error {
	path := os.Getenv("HOOKLINE_OUTPUTS")
	if path == "" {
		path = filepath.Join("..", ".local", "outputs.json")
	}
	out, err := stackoutputs.Load(path)
	if err != nil {
		return err
	}
	if os.Getenv("AWS_ENDPOINT_URL") == "" {
		return fmt.Errorf("AWS_ENDPOINT_URL is not set: the tests talk to a local cloud only")
	}
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		return err
	}
	env.out = out
	env.cfg = cfg
	env.endpointURL = os.Getenv("AWS_ENDPOINT_URL")
	env.ddb = harness.DynamoDB(cfg)
	env.sqs = sqs.NewFromConfig(cfg)
	env.lambda = lambda.NewFromConfig(cfg)
	env.store = store.New(env.ddb, out.StateTableName)
	if out.SecretsKeyARN == "" {
		return fmt.Errorf("the stack has no SecretsKeyARN output: redeploy it (make deploy-local)")
	}
	env.kms = kms.NewFromConfig(cfg)
	env.sealer = &sealing.Sealer{KMS: env.kms, KeyID: out.SecretsKeyARN}
	_, err = env.ddb.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: &out.OutboxTableName})
	return err
}

// received is one request a receiver got.
type received struct {
	At     time.Time
	Header http.Header
	Body   []byte
}

// receiver is a webhook endpoint on 127.0.0.1 whose answers a test scripts.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	notify chan struct{}
}

// newReceiver answers each request with answer(n), n counting from 1.
// Its URL carries a path of its own, and a request to any other path is
// answered 404 and not recorded: a stray, a delivery to an endpoint of an
// earlier test whose receiver had this port before (ports are reused, and
// deliveries to a closed receiver are retried for minutes).
func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter)) *receiver {
	t.Helper()
	r := &receiver{notify: make(chan struct{}, 1000)}
	own := "/r" + strings.ToLower(rand.Text())
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !strings.HasPrefix(req.URL.Path, own) {
			http.NotFound(w, req)
			return
		}
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{At: time.Now(), Header: req.Header.Clone(), Body: body})
		n := len(r.got)
		r.mu.Unlock()
		answer(n, w)
		r.notify <- struct{}{}
	}))
	r.URL += own
	t.Cleanup(r.Close)
	return r
}

func status(code int) func(int, http.ResponseWriter) {
	return func(_ int, w http.ResponseWriter) { w.WriteHeader(code) }
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// waitFor waits until the receiver has n requests, failing after timeout.
func (r *receiver) waitFor(t *testing.T, n int, timeout time.Duration) []received {
	t.Helper()
	deadline := time.After(timeout)
	for {
		if got := r.requests(); len(got) >= n {
			return got
		}
		select {
		case <-r.notify:
		case <-deadline:
			t.Fatalf("receiver got %d requests in %s, want %d", len(r.requests()), timeout, n)
		}
	}
}

// tenant is a fresh tenant with one endpoint pointing at a receiver.
type tenant struct {
	ID       string
	Endpoint domain.Endpoint
	// Secret is the endpoint's signing secret, stored sealed.
	Secret string
}

// newTenant writes a tenant's endpoint as the api function does: its
// signing secret sealed under the stack's key.
func newTenant(t *testing.T, url string) tenant {
	t.Helper()
	secret, err := signing.NewSecret(rand.Reader)
	require.NoError(t, err)
	id := fmt.Sprintf("t_%s_%d", strings.ToLower(strings.ReplaceAll(t.Name(), "/", "_")), time.Now().UnixNano())
	sealed, err := env.sealer.Seal(context.Background(), sealing.Ref{TenantID: id, EndpointID: "ep_1"}, secret)
	require.NoError(t, err)
	ep := domain.Endpoint{TenantID: id, EndpointID: "ep_1", URL: url, SealedSecrets: []string{sealed}}
	require.NoError(t, env.store.PutEndpoint(context.Background(), ep))
	return tenant{ID: id, Endpoint: ep, Secret: secret}
}

// write puts an event into the outbox with TransactWriteItems, as a producer does.
func write(t *testing.T, e outbox.Event) time.Time {
	t.Helper()
	put, err := outbox.TransactPut(env.out.OutboxTableName, e)
	require.NoError(t, err)
	start := time.Now()
	_, err = env.ddb.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{put}})
	require.NoError(t, err)
	return start
}

func event(tn tenant, id, typ string, payload string) outbox.Event {
	return outbox.Event{ID: id, TenantID: tn.ID, Type: typ, Payload: json.RawMessage(payload), OccurredAt: time.Now().UTC()}
}

// deliveryID is the id enqueue gives the delivery of event eventID to
// endpointID: named by the event's time (domain.DeliveryID), read from its
// outbox item, which must exist.
func deliveryID(t *testing.T, eventID, endpointID string) string {
	t.Helper()
	out, err := env.ddb.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: &env.out.OutboxTableName, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{outbox.AttrID: &types.AttributeValueMemberS{Value: eventID}},
	})
	require.NoError(t, err)
	require.NotNil(t, out.Item, "event %s is not in the outbox", eventID)
	at, ok := out.Item[outbox.AttrOccurredAt].(*types.AttributeValueMemberS)
	require.True(t, ok, "event %s has no occurred_at", eventID)
	occurred, err := time.Parse(time.RFC3339Nano, at.Value)
	require.NoError(t, err)
	tenant, ok := out.Item[outbox.AttrTenantID].(*types.AttributeValueMemberS)
	require.True(t, ok, "event %s has no tenant_id", eventID)
	return domain.DeliveryID(tenant.Value, eventID, endpointID, occurred)
}

// waitDelivery polls the delivery record until cond holds.
func waitDelivery(t *testing.T, id string, timeout time.Duration, cond func(domain.Delivery) bool) domain.Delivery {
	t.Helper()
	var last domain.Delivery
	var lastErr error
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		last, lastErr = env.store.Delivery(context.Background(), id)
		if lastErr == nil && cond(last) {
			return last
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("delivery %s: condition not met in %s; last %+v, err %v", id, timeout, last, lastErr)
	return last
}

// waitInDLQ waits until a delivery is dead-lettered, as its record in the
// state table says (dead, in the dead index, with the message the DLQ
// holds), and returns that message. It reads the store, never the shared
// DLQ: a receive would hide other tests' messages from the sweep, the
// redrive and their own checks.
func waitInDLQ(t *testing.T, deliveryID string, timeout time.Duration) message.Message {
	t.Helper()
	d := waitDelivery(t, deliveryID, timeout, func(d domain.Delivery) bool { return d.State == domain.StateDead && d.Message != "" })
	msg, err := message.Decode(d.Message)
	require.NoError(t, err, "delivery %s: its dead record holds no delivery message", deliveryID)
	require.Equal(t, deliveryID, msg.DeliveryID)
	return msg
}
