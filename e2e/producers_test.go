//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/signing"
	"github.com/stretchr/testify/require"
)

// producer is an outbox library's example producer: the command that runs
// it from the repository's root, and what makes it ready (make test runs
// those targets before the end-to-end tests).
type producer struct {
	lang   string
	cmd    []string
	ready  string // a file the target makes
	target string
}

var producers = []producer{
	{"typescript", []string{"node", "outbox-ts/examples/produce.mjs"}, "outbox-ts/dist/index.js", "make outbox-ts-test"},
	{"python", []string{"outbox-py/.venv/bin/python", "outbox-py/examples/produce.py"}, "outbox-py/.venv/bin/python", "make outbox-py-test"},
}

// A TypeScript producer and a Python producer each write an order and its
// event in one TransactWriteItems with their outbox library (AWS SDK for
// JavaScript v3; boto3), on the local cloud: both business items are
// there, and the receiver gets both events, signed, with the payloads the
// producers gave.
func TestProducersInOtherLanguages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	tenant, key := apiTenant(t, "producers")
	rcv := newReceiver(t, status(http.StatusOK))
	status, body := call(t, "POST", "/v1/endpoints", key, map[string]any{"url": rcv.URL})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	secret := body["secret"].(string)

	business := fmt.Sprintf("hookline-orders-%d", time.Now().UnixNano())
	_, err = env.ddb.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: &business, BillingMode: ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash}},
	})
	require.NoError(t, err)
	t.Cleanup(func() { env.ddb.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &business}) })

	want := map[string]string{} // event id -> language
	for i, p := range producers {
		_, err := os.Stat(filepath.Join(root, p.ready))
		require.NoError(t, err, "the %s producer is not built: run `%s` (make test does)", p.lang, p.target)
		eventID := fmt.Sprintf("evt_%s_%s", p.lang, tenant)
		in, err := json.Marshal(map[string]any{
			"outboxTable": env.out.OutboxTableName, "businessTable": business, "tenantId": tenant, "eventId": eventID,
			"type": "order.paid", "payload": map[string]any{"order_id": fmt.Sprint(1000 + i), "by": p.lang}, "orderId": fmt.Sprint(1000 + i),
		})
		require.NoError(t, err)
		cmd := exec.Command(p.cmd[0], p.cmd[1:]...)
		var stderr bytes.Buffer
		cmd.Dir, cmd.Stdin, cmd.Stderr = root, bytes.NewReader(in), &stderr
		out, err := cmd.Output() // stderr apart: the SDK for JavaScript warns there of Node 20's end of life
		require.NoError(t, err, "%s producer: %s %s", p.lang, out, stderr.String())
		require.JSONEq(t, `{"ok":true}`, string(bytes.TrimSpace(out)), p.lang)
		t.Logf("%s producer: %s", p.lang, bytes.TrimSpace(out))
		want[eventID] = p.lang

		item, err := env.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: &business, ConsistentRead: aws.Bool(true),
			Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: fmt.Sprintf("order#%d", 1000+i)}}})
		require.NoError(t, err)
		require.NotNil(t, item.Item, "the %s producer's business write committed with its event", p.lang)
	}

	v, err := signing.NewVerifier(secret)
	require.NoError(t, err)
	got := map[string]string{}
	for _, r := range rcv.waitFor(t, len(producers), 60*time.Second) {
		require.NoError(t, v.VerifyRequest(r.Header, r.Body), "signed")
		var ev struct {
			ID   string `json:"id"`
			Type string `json:"type"`
			Data struct {
				By string `json:"by"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal(r.Body, &ev))
		require.Equal(t, "order.paid", ev.Type)
		got[ev.ID] = ev.Data.By
		t.Logf("received %s from the %s producer, signature verified", ev.ID, ev.Data.By)
	}
	require.Equal(t, want, got, "each producer's event, its payload as given")
}
