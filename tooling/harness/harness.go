// Package harness is what the demo, the soak and the replay benchmark share:
// the deployed stack's outputs, AWS clients pointed at the local cloud, the
// operator's API client, new tenants, and the DLQ listing.
package harness

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/stackoutputs"
	"github.com/hookline/hookline/tooling/apiclient"
)

// Env is a deployed stack and the clients to drive it.
type Env struct {
	Out      stackoutputs.Outputs
	AWS      aws.Config
	DB       *dynamodb.Client
	BaseURL  string
	Operator *apiclient.Client
}

// Load reads .local/outputs.json and the operator key, for the local cloud
// at AWS_ENDPOINT_URL.
func Load(ctx context.Context) (*Env, error) {
	out, err := stackoutputs.Load(".local/outputs.json")
	if err != nil {
		return nil, err
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, err
	}
	sec, err := secretsmanager.NewFromConfig(cfg).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &out.OperatorKeySecretARN})
	if err != nil {
		return nil, fmt.Errorf("read the operator key: %w", err)
	}
	base := apiclient.LocalURL(os.Getenv("AWS_ENDPOINT_URL"), out.ApiID)
	return &Env{Out: out, AWS: cfg, DB: DynamoDB(cfg), BaseURL: base,
		Operator: &apiclient.Client{BaseURL: base, Key: aws.ToString(sec.SecretString)}}, nil
}

// DynamoDB returns a DynamoDB client for the local cloud: every tool's
// DynamoDB client (the demo's, the soak's, the benchmarks', the end-to-end
// tests') is built here.
//
// It does not check responses' X-Amz-Crc32 header. ministack (1.5.33) sends
// it on the answers of its DynamoDB handler but not on those made around it
// (an unknown operation, an internal error answered 500 and retried, a
// request it cannot parse), and the SDK takes a missing header for a
// checksum of 0: it logs "failed to close HTTP response body ... response
// did not match expected checksum, 0, <crc>" for a response it read in full
// and decoded. On a loopback connection the check guards nothing. The
// functions keep it (internal/boot): AWS always sends the header.
func DynamoDB(cfg aws.Config) *dynamodb.Client {
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.DisableValidateResponseChecksum = true })
}

// Tenant creates a tenant named prefix_<time> and a key for it, and returns
// its id, the key's id and an API client with that key.
func (e *Env) Tenant(ctx context.Context, prefix, name string) (string, string, *apiclient.Client, error) {
	id := fmt.Sprintf("%s_%d", prefix, time.Now().UnixNano())
	if err := e.Operator.Do(ctx, "POST", "/v1/admin/tenants", map[string]string{"tenant_id": id, "name": name}, nil); err != nil {
		return "", "", nil, fmt.Errorf("create tenant: %w", err)
	}
	var key api.KeyView
	if err := e.Operator.Do(ctx, "POST", "/v1/admin/tenants/"+id+"/keys", nil, &key); err != nil {
		return "", "", nil, fmt.Errorf("create key: %w", err)
	}
	return id, key.KeyID, &apiclient.Client{BaseURL: e.BaseURL, Key: key.Key}, nil
}

// ListDead pages through a tenant's whole DLQ listing.
func ListDead(ctx context.Context, c *apiclient.Client) ([]api.DeadLetterView, error) {
	return ListAll[api.DeadLetterView](ctx, c, "/v1/dlq?limit=100")
}

// ListAll pages through a whole listing of the API, path its first page
// (with its query, a limit among it), following next_cursor.
func ListAll[T any](ctx context.Context, c *apiclient.Client, path string) ([]T, error) {
	var all []T
	cursor := ""
	for {
		var page struct {
			Data       []T    `json:"data"`
			NextCursor string `json:"next_cursor"`
		}
		p := path
		if cursor != "" {
			p += "&cursor=" + cursor
		}
		if err := c.Do(ctx, "GET", p, nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Data...)
		if cursor = page.NextCursor; cursor == "" {
			return all, nil
		}
	}
}
