//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// The store's contract, checked against the real table in the local cloud.
func TestStoreAgainstLocalCloud(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := env.store
	tenantID := fmt.Sprintf("t_store_%d", time.Now().UnixNano())

	// current reads a delivery as deliver does: one that does not exist
	// yet (no attempt recorded) is the message's ids.
	current := func(t *testing.T, d domain.Delivery) domain.Delivery {
		t.Helper()
		cur, err := s.Delivery(ctx, d.DeliveryID)
		if errors.Is(err, store.ErrNotFound) {
			return d
		}
		require.NoError(t, err)
		return cur
	}

	t.Run("the first attempt writes the whole record; later attempts keep its creation attributes", func(t *testing.T) {
		// The event id is new each run: the listing derives the delivery
		// ids from the event's and endpoints' ids.
		evTenant, evID := tenantID+"_ev", "evt_s1_"+tenantID
		require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: evTenant, EndpointID: "ep", URL: "https://example.com/ep", Secrets: []string{"whsec_x"}}))
		d := domain.Delivery{DeliveryID: domain.DeliveryID(evID, "ep"), TenantID: evTenant, EndpointID: "ep", EventID: evID, EventType: "a.b"}
		_, err := s.Delivery(ctx, d.DeliveryID)
		require.ErrorIs(t, err, store.ErrNotFound, "nothing before the first attempt")
		require.NoError(t, s.RecordAttempt(ctx, current(t, d), domain.Attempt{Number: 1, At: time.Now().UTC(), Status: 503, Error: "http_503"}, domain.Outcome{State: domain.StatePending}))
		first, err := s.Delivery(ctx, d.DeliveryID)
		require.NoError(t, err)
		require.Equal(t, domain.StatePending, first.State)
		require.Equal(t, 1, first.Attempts)
		require.Equal(t, d.DeliveryID, first.DeliveryID)
		require.Equal(t, evTenant, first.TenantID)
		require.Equal(t, "ep", first.EndpointID)
		require.Equal(t, evID, first.EventID)
		require.Equal(t, "a.b", first.EventType)
		require.False(t, first.CreatedAt.IsZero())
		require.Nil(t, first.EnqueuedAt, "enqueue records nothing, and no attempt claims it did")
		raw := func() map[string]types.AttributeValue {
			item, err := env.ddb.GetItem(ctx, &dynamodb.GetItemInput{
				TableName: &env.out.StateTableName, ConsistentRead: aws.Bool(true),
				Key: map[string]types.AttributeValue{
					"pk": &types.AttributeValueMemberS{Value: "DELIVERY#" + d.DeliveryID},
					"sk": &types.AttributeValueMemberS{Value: "DELIVERY"},
				},
			})
			require.NoError(t, err)
			return item.Item
		}
		item := raw()
		require.Contains(t, item, "expires_at", "it expires like any delivery")

		// The second attempt an hour later (a store on a later clock), so
		// that a rewrite of the creation attributes would show.
		later := store.New(env.ddb, env.out.StateTableName)
		later.Now = func() time.Time { return time.Now().Add(time.Hour) }
		require.NoError(t, later.RecordAttempt(ctx, current(t, d), domain.Attempt{Number: 2, At: later.Now().UTC(), Status: 200}, domain.Outcome{State: domain.StateDelivered}))
		got, err := s.Delivery(ctx, d.DeliveryID)
		require.NoError(t, err)
		require.Equal(t, domain.StateDelivered, got.State)
		require.Equal(t, 2, got.Attempts)
		require.Equal(t, first.CreatedAt, got.CreatedAt, "the creation time is the first attempt's")
		item2 := raw()
		require.Equal(t, item["expires_at"], item2["expires_at"], "and so is the expiry")
		for name := range item2 {
			require.NotContains(t, name, "gsi", "a delivered delivery is in no index")
		}
		// A delivery of the same event to an endpoint that no longer
		// exists: readable by id, not listed under its event.
		gone := domain.Delivery{DeliveryID: domain.DeliveryID(evID, "ep_deleted"), TenantID: evTenant, EndpointID: "ep_deleted", EventID: evID, EventType: "a.b"}
		require.NoError(t, s.RecordAttempt(ctx, gone, domain.Attempt{Number: 1, At: time.Now().UTC(), Status: 200}, domain.Outcome{State: domain.StateDelivered}))
		_, err = s.Delivery(ctx, gone.DeliveryID)
		require.NoError(t, err)
		// The endpoints query is eventually consistent, the deliveries'
		// read strongly: poll until the new endpoint is seen.
		var listed []domain.Delivery
		require.Eventually(t, func() bool {
			ds, err := s.DeliveriesOfEvent(ctx, evTenant, evID)
			if err != nil || len(ds) == 0 {
				return false
			}
			listed = ds
			return true
		}, 10*time.Second, 200*time.Millisecond, "listed under its event")
		require.Len(t, listed, 1, "the delivery to the deleted endpoint is not listed")
		require.Equal(t, d.DeliveryID, listed[0].DeliveryID)
	})

	t.Run("attempts append, dead is indexed per tenant, delivered never regresses", func(t *testing.T) {
		d := domain.Delivery{DeliveryID: domain.DeliveryID("evt_s2", tenantID), TenantID: tenantID, EndpointID: "ep", EventID: "evt_s2", EventType: "a.b"}
		now := time.Now().UTC()
		// As deliver does: read the delivery, attempt, record.
		record := func(a domain.Attempt, o domain.Outcome) {
			t.Helper()
			require.NoError(t, s.RecordAttempt(ctx, current(t, d), a, o))
		}
		record(domain.Attempt{Number: 1, At: now, Status: 500, Error: "http_500", LatencyMS: 12}, domain.Outcome{State: domain.StatePending})
		record(domain.Attempt{Number: 2, At: now, Status: 400, Error: "http_400"}, domain.Outcome{State: domain.StateDead, DeadReason: "rejected_400"})
		got, err := s.Delivery(ctx, d.DeliveryID)
		require.NoError(t, err)
		require.Equal(t, domain.StateDead, got.State)
		require.Equal(t, "rejected_400", string(got.DeadReason))
		require.Equal(t, 2, got.Attempts)
		require.Len(t, got.AttemptLog, 2)
		require.Equal(t, 500, got.AttemptLog[0].Status)

		// The index is eventually consistent: poll until it lists it.
		var listed []map[string]types.AttributeValue
		require.Eventually(t, func() bool {
			q, err := env.ddb.Query(ctx, &dynamodb.QueryInput{
				TableName: &env.out.StateTableName, IndexName: aws.String("gsi1"),
				KeyConditionExpression:    aws.String("gsi1pk = :pk"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "TENANT#" + tenantID + "#DEAD"}},
			})
			if err != nil || len(q.Items) == 0 {
				return false
			}
			listed = q.Items
			return true
		}, 10*time.Second, 200*time.Millisecond, "the dead delivery is listed under its tenant")
		require.Len(t, listed, 1)
		// Kept Retention from its death, longer than the DLQ keeps its
		// message (14 days from the send).
		exp, ok := listed[0]["expires_at"].(*types.AttributeValueMemberN)
		require.True(t, ok, "a dead delivery expires")
		expires, err := strconv.ParseInt(exp.Value, 10, 64)
		require.NoError(t, err)
		require.GreaterOrEqual(t, expires, time.Now().Add(store.DefaultRetention-time.Minute).Unix())

		record(domain.Attempt{Number: 3, At: now, Status: 200}, domain.Outcome{State: domain.StateDelivered})
		record(domain.Attempt{Number: 4, At: now, Status: 500}, domain.Outcome{State: domain.StatePending})
		got, err = s.Delivery(ctx, d.DeliveryID)
		require.NoError(t, err)
		require.Equal(t, domain.StateDelivered, got.State, "a late attempt cannot undo a delivery")
		require.Equal(t, 3, got.Attempts)
	})

	t.Run("the attempt log keeps the newest entries", func(t *testing.T) {
		d := domain.Delivery{DeliveryID: domain.DeliveryID("evt_s3", tenantID), TenantID: tenantID, EndpointID: "ep", EventID: "evt_s3", EventType: "a.b"}
		for i := 1; i <= store.MaxAttemptLog+5; i++ {
			require.NoError(t, s.RecordAttempt(ctx, current(t, d), domain.Attempt{Number: i, At: time.Now().UTC(), Status: 503}, domain.Outcome{State: domain.StatePending}))
		}
		got, err := s.Delivery(ctx, d.DeliveryID)
		require.NoError(t, err)
		require.Equal(t, store.MaxAttemptLog+5, got.Attempts, "every attempt is counted")
		require.Len(t, got.AttemptLog, store.MaxAttemptLog)
		require.Equal(t, 6, got.AttemptLog[0].Number, "the oldest entries are dropped")
		require.Equal(t, store.MaxAttemptLog+5, got.AttemptLog[store.MaxAttemptLog-1].Number)
	})

	t.Run("endpoint failures count up, reset, and disable at the threshold", func(t *testing.T) {
		require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: tenantID + "_health", EndpointID: "ep_health", URL: "https://example.com", Secrets: []string{"whsec_x"}}))
		for i := 1; i <= 2; i++ {
			disabled, err := s.RecordEndpointFailure(ctx, tenantID+"_health", "ep_health", 3)
			require.NoError(t, err)
			require.False(t, disabled)
		}
		require.NoError(t, s.ResetEndpointFailures(ctx, tenantID+"_health", "ep_health"))
		ep, err := s.Endpoint(ctx, tenantID+"_health", "ep_health")
		require.NoError(t, err)
		require.Zero(t, ep.ConsecutiveFailures)
		var disabledAt int
		for i := 1; i <= 4; i++ {
			disabled, err := s.RecordEndpointFailure(ctx, tenantID+"_health", "ep_health", 3)
			require.NoError(t, err)
			if disabled {
				require.Zero(t, disabledAt, "disabled once, not again")
				disabledAt = i
			}
		}
		require.Equal(t, 3, disabledAt)
		ep, err = s.Endpoint(ctx, tenantID+"_health", "ep_health")
		require.NoError(t, err)
		require.True(t, ep.Disabled)
		require.Equal(t, domain.DisabledConsecutiveFailures, ep.DisabledReason)
		_, err = s.RecordEndpointFailure(ctx, tenantID, "ep_gone_missing", 3)
		require.Error(t, err, "counting must not create an endpoint")
	})

	t.Run("endpoints list per tenant; disable needs an existing endpoint", func(t *testing.T) {
		for _, id := range []string{"ep_a", "ep_b"} {
			require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: tenantID, EndpointID: id, URL: "https://example.com/" + id, Secrets: []string{"whsec_x"}}))
		}
		require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: tenantID + "_other", EndpointID: "ep_c", URL: "https://example.com", Secrets: []string{"whsec_x"}}))
		eps, err := s.Endpoints(ctx, tenantID)
		require.NoError(t, err)
		require.Len(t, eps, 2)
		require.NoError(t, s.DisableEndpoint(ctx, tenantID, "ep_a", "endpoint_gone"))
		ep, err := s.Endpoint(ctx, tenantID, "ep_a")
		require.NoError(t, err)
		require.True(t, ep.Disabled)
		require.Equal(t, "endpoint_gone", string(ep.DisabledReason))
		require.Error(t, s.DisableEndpoint(ctx, tenantID, "ep_missing", "x"), "disabling must not create an endpoint")
		_, err = s.Endpoint(ctx, tenantID, "ep_missing")
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("replay claims: one winner, resumable, stale claims taken over", func(t *testing.T) {
		mk := func(n string) domain.Delivery {
			d := domain.Delivery{DeliveryID: domain.DeliveryID("evt_claim_"+n, tenantID), TenantID: tenantID, EndpointID: "ep", EventID: "evt_claim_" + n, EventType: "a.b"}
			require.NoError(t, s.RecordAttempt(ctx, current(t, d), domain.Attempt{Number: 1, At: time.Now().UTC(), Status: 400}, domain.Outcome{State: domain.StateDead, DeadReason: "rejected_400", Message: `{"m":"` + n + `"}`}))
			return d
		}
		d := mk("1")
		_, err := s.ClaimForReplay(ctx, d.DeliveryID, "someone_else", "job_x", time.Hour)
		require.ErrorIs(t, err, store.ErrNotFound, "another tenant's delivery is as good as missing")
		got, err := s.ClaimForReplay(ctx, d.DeliveryID, tenantID, "job_a", time.Hour)
		require.NoError(t, err)
		require.Equal(t, domain.StatePending, got.State)
		require.Equal(t, `{"m":"1"}`, got.Message, "the claim returns the message to send")
		require.NotNil(t, got.ReplayedAt)
		_, err = s.ClaimForReplay(ctx, d.DeliveryID, tenantID, "job_b", time.Hour)
		require.ErrorIs(t, err, store.ErrReplayInFlight, "a second job loses")
		_, err = s.ClaimForReplay(ctx, d.DeliveryID, tenantID, "job_a", time.Hour)
		require.NoError(t, err, "the same job resumes its claim")
		require.NoError(t, s.ReleaseReplay(ctx, d.DeliveryID, "job_a"))
		_, err = s.ClaimForReplay(ctx, d.DeliveryID, tenantID, "job_a", time.Hour)
		require.ErrorIs(t, err, store.ErrNotDead, "released and pending: nothing to replay")
		got, err = s.Delivery(ctx, d.DeliveryID)
		require.NoError(t, err)
		require.Equal(t, "job_a", got.ReplayedBy)
		require.Empty(t, got.ReplayJob)

		// A job that claimed and died: its pending claim goes stale and
		// another job (the operator's redrive) may take it over.
		e := mk("2")
		_, err = s.ClaimForReplay(ctx, e.DeliveryID, "", "job_dead", time.Hour)
		require.NoError(t, err)
		time.Sleep(5 * time.Millisecond)
		_, err = s.ClaimForReplay(ctx, e.DeliveryID, "", "job_redrive", time.Millisecond)
		require.NoError(t, err, "a stale claim on a pending, never-sent delivery is taken over")
	})

	t.Run("rejections are readable by key", func(t *testing.T) {
		key := "evt_rej_" + tenantID
		require.NoError(t, s.PutRejection(ctx, domain.Rejection{Key: key, EventID: key, TenantID: tenantID, Reason: "invalid_json", Field: "payload", Detail: "is not JSON"}))
		r, err := s.Rejection(ctx, key)
		require.NoError(t, err)
		require.Equal(t, "invalid_json", string(r.Reason))
		_, err = s.Rejection(ctx, "nope_"+key)
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("a batch read finds what exists, in chunks of 100 keys; consistent or not", func(t *testing.T) {
		tenant := tenantID + "_load"
		require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep_l", URL: "https://example.com/l", Secrets: []string{"whsec_x"}}))
		var ids []string
		for i := 0; i < 120; i++ {
			id := domain.DeliveryID(fmt.Sprintf("evt_load_%d", i), tenant)
			ids = append(ids, id)
			if i%2 == 0 { // every other one exists: attempted once
				d := domain.Delivery{DeliveryID: id, TenantID: tenant, EndpointID: "ep_l", EventID: fmt.Sprintf("evt_load_%d", i), EventType: "a.b"}
				require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: time.Now().UTC(), Status: 503}, domain.Outcome{State: domain.StatePending}))
			}
		}
		refs := []store.EndpointRef{{TenantID: tenant, EndpointID: "ep_l"}, {TenantID: tenant, EndpointID: "ep_l"}, {TenantID: tenant, EndpointID: "ep_gone"}}
		snap, err := s.Load(ctx, append(ids, ids[0]), refs)
		require.NoError(t, err)
		require.Len(t, snap.Deliveries, 60)
		for i, id := range ids {
			d, ok := snap.Deliveries[id]
			require.Equal(t, i%2 == 0, ok, "delivery %d", i)
			if ok {
				require.Equal(t, domain.StatePending, d.State)
				require.Equal(t, "ep_l", d.EndpointID)
			}
		}
		require.Len(t, snap.Endpoints, 1)
		require.Equal(t, "https://example.com/l", snap.Endpoints[store.EndpointRef{TenantID: tenant, EndpointID: "ep_l"}].URL)

		// Eventually consistent (enqueue's read): the same, once the
		// writes have reached every replica (at once in the local cloud).
		require.Eventually(t, func() bool {
			snap, err := s.LoadWith(ctx, store.LoadOptions{Eventual: true}, ids, refs)
			return err == nil && len(snap.Deliveries) == 60 && len(snap.Endpoints) == 1
		}, 10*time.Second, 200*time.Millisecond)
	})

	t.Run("a death recorded before the last attempt is listed, counted once, and undone by a success", func(t *testing.T) {
		tenant := tenantID + "_last"
		depth := func() int {
			t.Helper()
			all, err := s.DLQDepths(ctx)
			require.NoError(t, err)
			return all[tenant]
		}
		listed := func(id string) bool {
			t.Helper()
			ds, _, err := s.ListDead(ctx, tenant, domain.DeadFilter{}, 100, "")
			require.NoError(t, err)
			for _, d := range ds {
				if d.DeliveryID == id {
					return true
				}
			}
			return false
		}
		now := time.Now().UTC()
		mk := func(n int) domain.Delivery {
			ev := fmt.Sprintf("evt_last_%d_%s", n, tenant)
			return domain.Delivery{DeliveryID: domain.DeliveryID(ev, "ep"), TenantID: tenant, EndpointID: "ep", EventID: ev, EventType: "a.b"}
		}

		// No record yet: the advance death writes a complete, listed one.
		d1 := mk(1)
		require.NoError(t, s.MarkDeadBeforeLastAttempt(ctx, d1, "attempts_exhausted", `{"m":1}`, now))
		got, err := s.Delivery(ctx, d1.DeliveryID)
		require.NoError(t, err)
		require.Equal(t, domain.StateDead, got.State)
		require.Equal(t, `{"m":1}`, got.Message)
		require.Equal(t, "attempts_exhausted", string(got.DeadReason))
		require.Equal(t, tenant, got.TenantID)
		require.True(t, listed(d1.DeliveryID))
		require.Equal(t, 1, depth())
		// The last attempt fails: dead still, counted once.
		require.NoError(t, s.RecordAttempt(ctx, got, domain.Attempt{Number: 4, At: now, Status: 500, Error: "http_500"}, domain.Outcome{State: domain.StateDead, DeadReason: "attempts_exhausted", Message: `{"m":1}`}))
		require.Equal(t, 1, depth(), "not counted twice")

		// A pending delivery whose last attempt succeeds: the advance death
		// is undone, listing and count included.
		d2 := mk(2)
		require.NoError(t, s.RecordAttempt(ctx, d2, domain.Attempt{Number: 1, At: now, Status: 503}, domain.Outcome{State: domain.StatePending}))
		require.NoError(t, s.MarkDeadBeforeLastAttempt(ctx, d2, "attempts_exhausted", `{"m":2}`, now))
		require.Equal(t, 2, depth())
		require.True(t, listed(d2.DeliveryID))
		cur, err := s.Delivery(ctx, d2.DeliveryID)
		require.NoError(t, err)
		require.NoError(t, s.RecordAttempt(ctx, cur, domain.Attempt{Number: 2, At: now, Status: 200}, domain.Outcome{State: domain.StateDelivered}))
		got, err = s.Delivery(ctx, d2.DeliveryID)
		require.NoError(t, err)
		require.Equal(t, domain.StateDelivered, got.State)
		require.Empty(t, got.Message, "the stored message goes with the death")
		require.Empty(t, got.DeadReason)
		require.False(t, listed(d2.DeliveryID))
		require.Equal(t, 1, depth())

		// A dead delivery that another copy of it retries (a replay's, a
		// resent one's) leaves the dead index and the count.
		d3 := mk(3)
		require.NoError(t, s.MarkDeadBeforeLastAttempt(ctx, d3, "attempts_exhausted", `{"m":3}`, now))
		require.Equal(t, 2, depth())
		require.NoError(t, s.RecordAttempt(ctx, d3, domain.Attempt{Number: 1, At: now, Status: 503}, domain.Outcome{State: domain.StatePending}))
		require.False(t, listed(d3.DeliveryID))
		require.Equal(t, 1, depth())

		// A delivered one is left alone.
		require.NoError(t, s.MarkDeadBeforeLastAttempt(ctx, d2, "attempts_exhausted", `{"m":2}`, now))
		got, err = s.Delivery(ctx, d2.DeliveryID)
		require.NoError(t, err)
		require.Equal(t, domain.StateDelivered, got.State)
		require.Equal(t, 1, depth())
	})

	t.Run("two copies attempted at once: both attempts are logged and counted", func(t *testing.T) {
		tenant := tenantID + "_dup"
		for i := range 10 {
			ev := fmt.Sprintf("evt_dup_%d_%s", i, tenant)
			d := domain.Delivery{DeliveryID: domain.DeliveryID(ev, "ep"), TenantID: tenant, EndpointID: "ep", EventID: ev, EventType: "a.b"}
			require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: time.Now().UTC(), Status: 503}, domain.Outcome{State: domain.StatePending}))
			stale := current(t, d) // both copies read it before either writes
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for w := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[w] = s.RecordAttempt(ctx, stale, domain.Attempt{Number: 2 + w, At: time.Now().UTC(), Status: 503}, domain.Outcome{State: domain.StatePending})
				}()
			}
			wg.Wait()
			require.NoError(t, errors.Join(errs...))
			got, err := s.Delivery(ctx, d.DeliveryID)
			require.NoError(t, err)
			require.Equal(t, 3, got.Attempts, "delivery %d", i)
			var ns []int
			for _, a := range got.AttemptLog {
				ns = append(ns, a.Number)
			}
			require.ElementsMatch(t, []int{1, 2, 3}, ns, "delivery %d: no entry lost", i)
		}
	})

	t.Run("a write on a record that changed since it was read moves nothing, the count included", func(t *testing.T) {
		tenant := tenantID + "_cond"
		depth := func() int {
			t.Helper()
			all, err := s.DLQDepths(ctx)
			require.NoError(t, err)
			return all[tenant]
		}
		ev := "evt_cond_" + tenant
		d := domain.Delivery{DeliveryID: domain.DeliveryID(ev, "ep"), TenantID: tenant, EndpointID: "ep", EventID: ev, EventType: "a.b"}
		// The sweep read it as missing; an attempt made the record meanwhile.
		require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: time.Now().UTC(), Status: 503}, domain.Outcome{State: domain.StatePending}))
		before, err := s.Delivery(ctx, d.DeliveryID)
		require.NoError(t, err)
		death := domain.Outcome{State: domain.StateDead, DeadReason: "attempts_exhausted", Message: `{"m":1}`}
		err = s.RecordAttemptIfUnchanged(ctx, d, domain.Attempt{Number: 1, At: time.Now().UTC(), Error: "death_not_recorded"}, death)
		require.ErrorIs(t, err, store.ErrConflict, "attribute_not_exists(pk) refused it")
		after, err := s.Delivery(ctx, d.DeliveryID)
		require.NoError(t, err)
		require.Equal(t, before, after, "the record made meanwhile is as it was")
		require.Zero(t, depth(), "the cancelled transaction counted nothing")

		// On the record as it is, the death is recorded and counted once.
		require.NoError(t, s.RecordAttemptIfUnchanged(ctx, after, domain.Attempt{Number: 2, At: time.Now().UTC(), Error: "death_not_recorded"}, death))
		got, err := s.Delivery(ctx, d.DeliveryID)
		require.NoError(t, err)
		require.Equal(t, domain.StateDead, got.State)
		require.Len(t, got.AttemptLog, 2)
		require.Equal(t, 1, depth())
	})

	t.Run("a replay's claim gives the record its retention again", func(t *testing.T) {
		tenant := tenantID + "_exp"
		ev := "evt_exp_" + tenant
		d := domain.Delivery{DeliveryID: domain.DeliveryID(ev, "ep"), TenantID: tenant, EndpointID: "ep", EventID: ev, EventType: "a.b"}
		require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: time.Now().UTC(), Status: 400}, domain.Outcome{State: domain.StateDead, DeadReason: "rejected_400", Message: "{}"}))
		// Claimed ten days after its death.
		later := store.New(env.ddb, env.out.StateTableName)
		claimedAt := time.Now().Add(10 * 24 * time.Hour)
		later.Now = func() time.Time { return claimedAt }
		_, err := later.ClaimForReplay(ctx, d.DeliveryID, tenant, "job_exp", time.Hour)
		require.NoError(t, err)
		item, err := env.ddb.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: &env.out.StateTableName, ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: "DELIVERY#" + d.DeliveryID},
				"sk": &types.AttributeValueMemberS{Value: "DELIVERY"},
			},
		})
		require.NoError(t, err)
		require.Equal(t, &types.AttributeValueMemberN{Value: strconv.FormatInt(claimedAt.Add(store.DefaultRetention).Unix(), 10)}, item.Item["expires_at"])
	})

	t.Run("a counter left off by an earlier version is corrected by the reconciliation", func(t *testing.T) {
		tenant := tenantID + "_rec"
		for i := range 2 {
			ev := fmt.Sprintf("evt_rec_%d_%s", i, tenant)
			d := domain.Delivery{DeliveryID: domain.DeliveryID(ev, "ep"), TenantID: tenant, EndpointID: "ep", EventID: ev, EventType: "a.b"}
			require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: time.Now().UTC(), Status: 400}, domain.Outcome{State: domain.StateDead, DeadReason: "rejected_400", Message: "{}"}))
		}
		// As the old crash left it: a death counted whose delivery's write
		// was lost, moved in a write of its own.
		_, err := env.ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: &env.out.StateTableName,
			Key: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: "TENANT#" + tenant},
				"sk": &types.AttributeValueMemberS{Value: "DLQDEPTH"},
			},
			UpdateExpression:          aws.String("SET #depth = :d REMOVE moves, moved_at"),
			ExpressionAttributeNames:  map[string]string{"#depth": "depth"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":d": &types.AttributeValueMemberN{Value: "3"}},
		})
		require.NoError(t, err)
		// The index is eventually consistent: poll until it counts both.
		var check store.DepthCheck
		require.Eventually(t, func() bool {
			var err error
			check, err = s.ReconcileDLQDepth(ctx, tenant)
			return err == nil && check.Corrected
		}, 10*time.Second, 200*time.Millisecond)
		require.Equal(t, store.DepthCheck{TenantID: tenant, Counter: 3, Indexed: 2, Corrected: true}, check)
		all, err := s.DLQDepths(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, all[tenant])

		// A counter that just moved is left for the next run.
		ev := "evt_rec_moved_" + tenant
		d := domain.Delivery{DeliveryID: domain.DeliveryID(ev, "ep"), TenantID: tenant, EndpointID: "ep", EventID: ev, EventType: "a.b"}
		require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: time.Now().UTC(), Status: 400}, domain.Outcome{State: domain.StateDead, DeadReason: "rejected_400", Message: "{}"}))
		check, err = s.ReconcileDLQDepth(ctx, tenant)
		require.NoError(t, err)
		require.Equal(t, store.DepthCheck{TenantID: tenant, Counter: 3, Deferred: true}, check)
	})

}
