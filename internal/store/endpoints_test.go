package store

import (
	"context"
	"fmt"
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
// finds another's item is. Endpoints, tenants and notification addresses:
// the creates by putNew.
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
	_, err = s.PutNotifyEmail(ctx, domain.NotifyEmail{TenantID: "t1", ID: "ne_1", Address: "ops@a.example.com"})
	require.NoError(t, err)
	require.Equal(t, 6, db.Calls("PutItem"), "each put was sent twice")

	now = now.Add(time.Nanosecond) // another create, of the same keys
	_, err = s.CreateEndpoint(ctx, domain.Endpoint{TenantID: "t1", EndpointID: "ep_1", URL: "https://b.example.com/", Secrets: []string{"whsec_b"}})
	require.ErrorIs(t, err, ErrExists)
	_, err = s.CreateTenant(ctx, domain.Tenant{TenantID: "t1", Name: "two"})
	require.ErrorIs(t, err, ErrExists)
	_, err = s.PutNotifyEmail(ctx, domain.NotifyEmail{TenantID: "t1", ID: "ne_1", Address: "other@a.example.com"})
	require.ErrorIs(t, err, ErrExists)
	e, err := s.Endpoint(ctx, "t1", "ep_1")
	require.NoError(t, err)
	require.Equal(t, "https://a.example.com/", e.URL, "the first endpoint is kept")
}

// scannedQueries records what each Query evaluated: the items DynamoDB
// bills it for (ScannedCount), whether it read them strongly consistent,
// and whether it asked for the items or their count only.
type scannedQueries struct {
	*dynamofake.DB
	scanned    int
	consistent []bool
	items      int
}

func (q *scannedQueries) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := q.DB.Query(ctx, in, opts...)
	if err == nil {
		q.scanned += int(out.ScannedCount)
		q.items += len(out.Items)
		q.consistent = append(q.consistent, aws.ToBool(in.ConsistentRead))
	}
	return out, err
}

// Counting a tenant's endpoints up to a bound evaluates at most that many
// items, whatever the tenant holds, over pages of the fake's size, reads
// them strongly consistent, and returns their count only.
func TestCountEndpointsReadsAtMostItsBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	db.PageSize = 4
	q := &scannedQueries{DB: db}
	s := New(q, "state")
	for i := range 30 {
		require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: "t", EndpointID: fmt.Sprintf("ep_%02d", i), URL: "https://example.com"}))
	}
	n, err := s.CountEndpoints(ctx, "t", 10)
	require.NoError(t, err)
	require.Equal(t, 10, n)
	require.Equal(t, 10, q.scanned, "only the items up to the bound are evaluated")
	require.Zero(t, q.items, "Select COUNT: no item comes back")
	require.Equal(t, []bool{true, true, true}, q.consistent, "pages of 4, 4 and the 2 left, each strongly consistent")

	q.scanned, q.consistent = 0, nil
	n, err = s.CountEndpoints(ctx, "t", 100)
	require.NoError(t, err)
	require.Equal(t, 30, n, "a bound above the count: every endpoint, once")
	require.Equal(t, 30, q.scanned)
}

// enqueue's read of a tenant evaluates the tenant's endpoint items and
// nothing else of its partition (the tenant's record) nor of another
// tenant's: what it costs is the endpoints the cap bounds, one Query page
// per page of them.
func TestTenantEndpointsReadsTheEndpointsOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	db.PageSize = 3
	q := &scannedQueries{DB: db}
	s := New(q, "state")
	s.Now = func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }
	_, err := s.CreateTenant(ctx, domain.Tenant{TenantID: "t", Name: "t"})
	require.NoError(t, err)
	for i := range 7 {
		require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: "t", EndpointID: fmt.Sprintf("ep_%d", i), URL: "https://example.com"}))
	}
	require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: "other", EndpointID: "ep_x", URL: "https://example.com"}))
	q.scanned = 0
	eps, erased, err := s.TenantEndpoints(ctx, "t")
	require.NoError(t, err)
	require.False(t, erased)
	require.Len(t, eps, 7)
	require.Equal(t, 7, q.scanned, "the endpoints, and no other item of the tenant's")
}

// enqueue's read of a tenant returns what routes an event and nothing
// else: an endpoint's URL, headers, secrets and description stay in the
// table.
func TestTenantEndpointsReadsTheRoutingOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := New(newFakeDB(), "state")
	_, err := s.CreateTenant(ctx, domain.Tenant{TenantID: "t", Name: "t"})
	require.NoError(t, err)
	full := domain.Endpoint{
		TenantID: "t", EndpointID: "ep_1", URL: "https://example.com/hook", Description: "the shop",
		Headers: map[string]string{"Authorization": "Bearer secret"}, SealedSecrets: []string{"sealed"},
		EventTypes: []string{"order.*"}, Filter: `{"a":["b"]}`, Disabled: true, Revision: 7,
	}
	require.NoError(t, s.PutEndpoint(ctx, full))
	eps, _, err := s.TenantEndpoints(ctx, "t")
	require.NoError(t, err)
	require.Len(t, eps, 1)
	want := domain.Endpoint{TenantID: "t", EndpointID: "ep_1", EventTypes: []string{"order.*"}, Filter: `{"a":["b"]}`, Disabled: true, Revision: 7}
	require.Equal(t, want, eps[0])
}
