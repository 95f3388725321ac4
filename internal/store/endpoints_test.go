package store

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/stretchr/testify/require"
)

// url is a reserved word in DynamoDB expressions: an update that names it
// bare is refused (a PATCH of an endpoint's url answered 500). Every field,
// set or cleared, goes by an alias.
func TestUpdateEndpointNamesEveryAttributeByAnAlias(t *testing.T) {
	t.Parallel()
	db := newFakeDB()
	s := newTestStore(db)
	require.NoError(t, s.PutEndpoint(context.Background(), domain.Endpoint{TenantID: "t1", EndpointID: "ep_1", URL: "https://hooks.example.com/in"}))
	url, desc, empty := "https://hooks.example.com/new", "d", ""
	types, headers := []string{"a.b"}, map[string]string{"X-A": "1"}
	for name, c := range map[string]EndpointChange{
		"set all":   {URL: &url, Description: &desc, EventTypes: &types, Headers: &headers},
		"clear all": {Description: &empty, EventTypes: &[]string{}, Headers: &map[string]string{}},
		"url only":  {URL: &url},
		"nothing":   {}, // DynamoDB refuses an empty ExpressionAttributeNames
	} {
		_, err := s.UpdateEndpoint(context.Background(), "t1", "ep_1", c)
		require.NoError(t, err, name)
	}
	require.Len(t, db.Updates(), 4)
	for _, up := range db.Updates() {
		for alias, attr := range up.ExpressionAttributeNames {
			require.Contains(t, aws.ToString(up.UpdateExpression), alias, attr)
		}
	}
}

// retriedPuts sends every PutItem twice, returning the second answer: what
// the SDK does when the first attempt's answer is lost (a timeout, a
// response that fails its checksum) after the write was made.
type retriedPuts struct{ *dynamofake.DB }

func (r retriedPuts) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	_, _ = r.DB.PutItem(ctx, in, opts...)
	return r.DB.PutItem(ctx, in, opts...)
}

// A create whose first attempt wrote the item is not refused as existing
// by the retry that finds it (it answered 500 on the local cloud); one that
// finds another's item is.
func TestCreateIsNotRefusedByItsOwnRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	s := New(retriedPuts{db}, "state")
	now := time.Date(2026, 11, 30, 1, 2, 3, 4, time.UTC)
	s.Now = func() time.Time { return now }

	_, err := s.CreateEndpoint(ctx, domain.Endpoint{TenantID: "t1", EndpointID: "ep_1", URL: "https://a.example.com/", Secrets: []string{"whsec_a"}})
	require.NoError(t, err)
	_, err = s.CreateTenant(ctx, domain.Tenant{TenantID: "t1", Name: "one"})
	require.NoError(t, err)
	require.Equal(t, 4, db.Calls("PutItem"), "each put was sent twice")

	now = now.Add(time.Nanosecond) // another create, of the same keys
	_, err = s.CreateEndpoint(ctx, domain.Endpoint{TenantID: "t1", EndpointID: "ep_1", URL: "https://b.example.com/", Secrets: []string{"whsec_b"}})
	require.ErrorIs(t, err, ErrExists)
	_, err = s.CreateTenant(ctx, domain.Tenant{TenantID: "t1", Name: "two"})
	require.ErrorIs(t, err, ErrExists)
	e, err := s.Endpoint(ctx, "t1", "ep_1")
	require.NoError(t, err)
	require.Equal(t, "https://a.example.com/", e.URL, "the first endpoint is kept")
}
