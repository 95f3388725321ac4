//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/hookline/hookline/internal/messagelog"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/storefake"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// metered is the local cloud's DynamoDB asking every write for its
// ConsumedCapacity (INDEXES) and adding it up: write units by index, ""
// the table's.
type metered struct {
	*dynamodb.Client
	table string
	mu    sync.Mutex
	w     map[string]float64
}

var indexes = types.ReturnConsumedCapacityIndexes

func (m *metered) add(cs ...*types.ConsumedCapacity) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range cs {
		if c == nil || aws.ToString(c.TableName) != m.table {
			continue
		}
		rest := aws.ToFloat64(c.CapacityUnits)
		for name, ix := range c.GlobalSecondaryIndexes {
			m.w[name] += aws.ToFloat64(ix.CapacityUnits)
			rest -= aws.ToFloat64(ix.CapacityUnits)
		}
		m.w[""] += rest
	}
}

func (m *metered) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	in.ReturnConsumedCapacity = indexes
	out, err := m.Client.PutItem(ctx, in, o...)
	if err == nil {
		m.add(out.ConsumedCapacity)
	}
	return out, err
}

func (m *metered) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	in.ReturnConsumedCapacity = indexes
	out, err := m.Client.UpdateItem(ctx, in, o...)
	if err == nil {
		m.add(out.ConsumedCapacity)
	}
	return out, err
}

func (m *metered) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	in.ReturnConsumedCapacity = indexes
	out, err := m.Client.DeleteItem(ctx, in, o...)
	if err == nil {
		m.add(out.ConsumedCapacity)
	}
	return out, err
}

func (m *metered) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	in.ReturnConsumedCapacity = indexes
	out, err := m.Client.TransactWriteItems(ctx, in, o...)
	if err == nil {
		for i := range out.ConsumedCapacity {
			m.add(&out.ConsumedCapacity[i])
		}
	}
	return out, err
}

func (m *metered) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	in.ReturnConsumedCapacity = indexes
	out, err := m.Client.BatchWriteItem(ctx, in, o...)
	if err == nil {
		for i := range out.ConsumedCapacity {
			m.add(&out.ConsumedCapacity[i])
		}
	}
	return out, err
}

func (m *metered) take() map[string]float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.w
	m.w = map[string]float64{}
	return w
}

// The write units the DynamoDB fake bills (dynamofake, the cost model's
// measure: tooling/perf/cost's TestModel*) are the units the local cloud
// reports (ConsumedCapacity, INDEXES) for the same writes of a delivery's
// life, op by op, on the deployed state table and its indexes: a first
// attempt delivered, alone and a batch's in one BatchWriteItem, a retry, a death (a transaction with the tenant's DLQ
// depth), the death marked before a last attempt and undone by its
// success, the endpoint's failure count and its reset, and the batch's
// counters, and enqueue's message log page of a stream batch (issue 37:
// units measured, not assumed). The local cloud
// reports no capacity for BatchGetItem, so reads are not compared.
func TestBilledWriteUnitsAreTheCloudsConsumedCapacity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cloud := &metered{Client: env.ddb, table: env.out.StateTableName, w: map[string]float64{}}
	now := time.Now().UTC().Truncate(time.Second)
	clock := func() time.Time { return now }
	onCloud := store.New(cloud, env.out.StateTableName)
	onCloud.Now = clock
	fake := storefake.New()
	fake.Now = clock

	tenant := fmt.Sprintf("capacity_%d", time.Now().UnixNano())
	ep := domain.Endpoint{TenantID: tenant, EndpointID: "ep_capacity", URL: "https://example.com/hook", Description: "capacity",
		SealedSecrets: []string{strings.Repeat("s", 120)}, CreatedAt: now}
	body := `{"delivery_id":"x","tenant_id":"` + tenant + `","payload":{"order":"` + strings.Repeat("o", 300) + `"}}`
	delivery := func(id string) domain.Delivery {
		return domain.Delivery{DeliveryID: "msg_" + id + "_" + tenant, TenantID: tenant, EndpointID: ep.EndpointID,
			EventID: "evt_" + id, EventType: "order.created", CreatedAt: now}
	}
	read := func(s *store.Store, d domain.Delivery) domain.Delivery {
		got, err := s.Delivery(ctx, d.DeliveryID)
		require.NoError(t, err)
		return got
	}
	pages := func(s *store.Store) *messagelog.Pages {
		if s == onCloud {
			return &messagelog.Pages{DB: cloud, Table: env.out.StateTableName}
		}
		return &messagelog.Pages{DB: fake.DB, Table: "state"}
	}
	var entries []messagelog.Entry
	for i := range 10 {
		at := now.Add(time.Duration(i) * time.Millisecond)
		entries = append(entries, messagelog.Entry{ID: fmt.Sprintf("evt_01jexample%018d", i), TenantID: tenant, Type: "order.created", OccurredAt: at, ExpiresAt: at.Add(outbox.DefaultRetention)})
	}
	th := store.HealthThresholds{FailingAfter: 5, DisableAfter: 100}
	stats := domain.AttemptStats{Attempts: 10, Delivered: 9, Failures: map[domain.AttemptClass]int64{domain.ClassHTTP5xx: 1}}
	steps := []struct {
		name string
		run  func(s *store.Store) error
	}{
		{"CreateEndpoint", func(s *store.Store) error { _, err := s.CreateEndpoint(ctx, ep); return err }},
		{"first attempt delivered", func(s *store.Store) error {
			return s.RecordAttempt(ctx, delivery("d1"), domain.Attempt{Number: 1, At: now, Status: 200, LatencyMS: 12}, domain.Outcome{State: domain.StateDelivered})
		}},
		{"first attempts delivered, a batch's (BatchWriteItem: one outcome page)", func(s *store.Store) error {
			var firsts []store.FirstAttempt
			for _, id := range []string{"b1", "b2", "b3"} {
				d := delivery(id) // an id that carries its time: packed
				d.DeliveryID = domain.DeliveryID(tenant, d.EventID, ep.EndpointID, now)
				firsts = append(firsts, store.FirstAttempt{Delivery: d, Attempt: domain.Attempt{Number: 1, At: now, Status: 200, LatencyMS: 12}})
			}
			left, err := s.RecordFirstAttempts(ctx, firsts)
			if err == nil && len(left) > 0 {
				err = fmt.Errorf("%d not written", len(left))
			}
			return err
		}},
		{"first attempt failed", func(s *store.Store) error {
			return s.RecordAttempt(ctx, delivery("d2"), domain.Attempt{Number: 1, At: now, Status: 503, Error: "http_503", LatencyMS: 30}, domain.Outcome{State: domain.StatePending})
		}},
		{"retry delivered", func(s *store.Store) error {
			return s.RecordAttempt(ctx, read(s, delivery("d2")), domain.Attempt{Number: 2, At: now, Status: 200, LatencyMS: 12}, domain.Outcome{State: domain.StateDelivered})
		}},
		{"death (with the tenant's DLQ depth)", func(s *store.Store) error {
			return s.RecordAttempt(ctx, delivery("d3"), domain.Attempt{Number: 1, At: now, Status: 400, LatencyMS: 9},
				domain.Outcome{State: domain.StateDead, DeadReason: domain.Rejected(400), Message: body})
		}},
		{"death marked before a last attempt", func(s *store.Store) error {
			return s.MarkDeadBeforeLastAttempt(ctx, delivery("d4"), domain.ReasonAttemptsExhausted, body, now)
		}},
		{"the last attempt delivered", func(s *store.Store) error {
			return s.RecordAttempt(ctx, read(s, delivery("d4")), domain.Attempt{Number: 1, At: now, Status: 200, LatencyMS: 12}, domain.Outcome{State: domain.StateDelivered})
		}},
		{"RecordEndpointHealth: failures counted", func(s *store.Store) error {
			_, err := s.RecordEndpointHealth(ctx, tenant, ep.EndpointID, false, 2, th)
			return err
		}},
		{"RecordEndpointHealth: reset", func(s *store.Store) error {
			_, err := s.RecordEndpointHealth(ctx, tenant, ep.EndpointID, true, 0, th)
			return err
		}},
		{"RecordEndpointHealth: reset, then failures", func(s *store.Store) error {
			_, err := s.RecordEndpointHealth(ctx, tenant, ep.EndpointID, true, 1, th)
			return err
		}},
		{"AddEndpointStats", func(s *store.Store) error { return s.AddEndpointStats(ctx, tenant, ep.EndpointID, now, stats) }},
		{"a stream batch's message log page, ten events (enqueue's BatchWriteItem)", func(s *store.Store) error { return pages(s).Write(ctx, entries) }},
		{"AddEndpointTypeStats", func(s *store.Store) error {
			return s.AddEndpointTypeStats(ctx, tenant, ep.EndpointID, "order.created", now, stats)
		}},
	}
	cloud.take()
	for _, step := range steps {
		before := fake.DB.Billed()
		require.NoError(t, step.run(fake.Store), "%s on the fake", step.name)
		billed := writes(fake.DB.Billed(), before)
		require.NoError(t, step.run(onCloud), "%s on the local cloud", step.name)
		consumed := cloud.take()
		t.Logf("%-40s fake %v, local cloud %v", step.name, billed, consumed)
		require.Equal(t, slices.Sorted(maps.Keys(consumed)), slices.Sorted(maps.Keys(billed)), "%s: the same table and indexes written", step.name)
		for name, u := range consumed {
			require.InDelta(t, u, billed[name], 1e-9, "%s: write units of %q", step.name, name)
		}
	}
}

// writes are the write units billed between before and after, by index,
// those with none left out.
func writes(after, before map[string]dynamofake.Units) map[string]float64 {
	out := map[string]float64{}
	for name, u := range after {
		if w := u.W - before[name].W; w > 0 {
			out[name] = w
		}
	}
	return out
}
