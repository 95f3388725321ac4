package background_test

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/erasure"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// fakeOutbox is the outbox table's items (id -> tenant, endpoint), listed
// per tenant as the by_tenant index lists them; failDelete makes the next
// DeleteEvent fail after it deleted (its answer lost).
type fakeOutbox struct {
	mu         sync.Mutex
	items      map[string]erasure.OutboxEvent
	tenants    map[string]string
	failDelete bool
}

func newFakeOutbox() *fakeOutbox {
	return &fakeOutbox{items: map[string]erasure.OutboxEvent{}, tenants: map[string]string{}}
}

func (o *fakeOutbox) put(id, tenant, endpoint string, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.items[id], o.tenants[id] = erasure.OutboxEvent{ID: id, EndpointID: endpoint, OccurredAt: at}, tenant
}

func (o *fakeOutbox) TenantEvents(_ context.Context, tenantID string, limit int) ([]erasure.OutboxEvent, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []erasure.OutboxEvent
	for id, ev := range o.items {
		if o.tenants[id] == tenantID {
			out = append(out, ev)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out[:min(len(out), limit)], nil
}

func (o *fakeOutbox) DeleteEvent(_ context.Context, id string) (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.items[id]
	delete(o.items, id)
	delete(o.tenants, id)
	if o.failDelete {
		o.failDelete = false
		return false, errors.New("RequestTimeout: the answer was lost")
	}
	return ok, nil
}

// DeletePages has no pages to delete: the fake lists the items themselves.
func (o *fakeOutbox) DeletePages(context.Context, []erasure.OutboxEvent) error { return nil }

func (o *fakeOutbox) tenantOf() map[string]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]string{}
	for id, t := range o.tenants {
		out[id] = t
	}
	return out
}

// seedErasure writes, for a tenant: its item, a key, two delivered events
// (one to every endpoint, one to ep_1 only, its delivery made before ids
// carried the time: under its legacy id) in the outbox, a dead delivery
// with its DLQ message, a rejection, a completed and an open job, a dead
// window and hourly counters.
func seedErasure(t *testing.T, e *env, o *fakeOutbox, tenant string) {
	ctx, s := context.Background(), e.st
	_, err := s.CreateTenant(ctx, domain.Tenant{TenantID: tenant})
	require.NoError(t, err)
	_, err = s.PutAPIKey(ctx, domain.APIKey{KeyID: "k", TenantID: tenant, Hash: "h_" + tenant})
	require.NoError(t, err)
	_, err = s.PutPortalLink(ctx, domain.PortalLink{LinkID: "pl", TenantID: tenant, Hash: "hl_" + tenant, ExpiresAt: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	eps, err := s.Endpoints(ctx, tenant)
	require.NoError(t, err)
	ok := domain.Attempt{Number: 1, At: e.t0, Status: 200}
	for _, ev := range []struct{ id, endpoint string }{{"evt_all_" + tenant, ""}, {"evt_one_" + tenant, "ep_1"}} {
		o.put(ev.id, tenant, ev.endpoint, e.t0)
		for _, ep := range eps {
			if ev.endpoint != "" && ep.EndpointID != ev.endpoint {
				continue
			}
			id := domain.DeliveryID(tenant, ev.id, ep.EndpointID, e.t0)
			if ev.endpoint != "" {
				id = domain.LegacyDeliveryID(ev.id, ep.EndpointID)
			}
			d := domain.Delivery{DeliveryID: id, TenantID: tenant, EndpointID: ep.EndpointID, EventID: ev.id}
			require.NoError(t, s.RecordAttempt(ctx, d, ok, domain.Outcome{State: domain.StateDelivered}))
		}
	}
	dead := e.dead("dead_"+tenant, tenant, "ep_1", "order.created", e.t0)
	e.q.addDLQ(dead.Message, e.t0)
	require.NoError(t, s.PutRejection(ctx, domain.Rejection{Key: "rej_" + tenant, TenantID: tenant, Reason: domain.RejectNoEndpoint}))
	done := domain.Job{JobID: "done_" + tenant, TenantID: tenant, Kind: domain.KindIDs, Status: domain.StatusCompleted, CompletedAt: timePtr(e.t0)}
	require.NoError(t, s.SaveJob(ctx, &done))
	open := domain.Job{JobID: "open_" + tenant, TenantID: tenant, Kind: domain.KindIDs, Status: domain.StatusQueued}
	require.NoError(t, s.CreateJob(ctx, &open, 3))
	_, err = s.AddDeath(ctx, tenant, "ep_1", e.t0, e.t0.Add(time.Minute), domain.OpDeath{DeliveryID: dead.DeliveryID})
	require.NoError(t, err)
	var st domain.AttemptStats
	st.Count(domain.ClassDelivered, time.Millisecond, e.t0, 200, "")
	require.NoError(t, s.AddEndpointStats(ctx, tenant, "ep_1", e.t0, st))
}

// startErasure starts a tenant's erasure as the API does: the tombstone,
// then the job (the one under way, if any).
func startErasure(ctx context.Context, e *env, tenant string) (domain.Job, error) {
	if j, err := e.st.Job(ctx, domain.ErasureJobID(tenant)); err == nil {
		return j, nil
	}
	if err := e.st.Tombstone(ctx, tenant); err != nil {
		return domain.Job{}, err
	}
	j := erasure.NewJob(tenant)
	return j, e.w.Start(ctx, &j)
}

// An erasure started as the API starts it tombstones the tenant at once
// (its key stops authenticating), runs as a job on the operations queue,
// survives a step that fails halfway (its outbox deletion's answer lost),
// and leaves nothing of the tenant readable: no key, endpoint, delivery
// (derived from its outbox items, and dead), outbox item, DLQ message,
// rejection, job, dead window, counter, DLQ depth or tenant; the other
// tenant keeps all of it, its DLQ message visible again. Asked again, it
// answers the same job.
func TestEraseTenant(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	o := newFakeOutbox()
	e.w.Outbox = o
	seedErasure(t, e, o, tenantA)
	seedErasure(t, e, o, tenantB)
	before := len(e.st.Deliveries())

	j, err := startErasure(ctx, e, tenantA)
	require.NoError(t, err)
	require.Equal(t, domain.ErasureJobID(tenantA), j.JobID)
	require.Equal(t, domain.KindErase, j.Kind)
	_, err = e.st.TenantForKey(ctx, "h_"+tenantA)
	require.ErrorIs(t, err, store.ErrNotFound, "its key stops authenticating at once")
	link, err := e.st.PortalLink(ctx, "hl_"+tenantA)
	require.NoError(t, err)
	require.NotNil(t, link.RevokedAt, "its portal link too")
	erased, err := e.st.Erased(ctx, tenantA)
	require.NoError(t, err)
	require.True(t, erased)
	require.Len(t, e.q.sentTo(opsURL), 1, "the job runs on the operations queue")
	again, err := startErasure(ctx, e, tenantA)
	require.NoError(t, err)
	require.Equal(t, j.JobID, again.JobID)
	require.Len(t, e.q.sentTo(opsURL), 1, "asked again: the same job, not another")
	_, err = startErasure(ctx, e, "nobody")
	require.ErrorIs(t, err, store.ErrNotFound)

	o.failDelete = true
	require.Error(t, e.w.Step(ctx, j.JobID), "a step stopped halfway")
	require.Equal(t, domain.StatusRunning, e.st.job(j.JobID).Status)
	e.run(t, e.w, j.JobID)

	got := e.st.job(j.JobID)
	require.Equal(t, domain.StatusCompleted, got.Status)
	require.Equal(t, map[string]int{
		domain.EraseAPIKeys: 1, domain.ErasePortalLinks: 1, domain.EraseDeliveries: 1, domain.EraseOutboxItems: 1, domain.EraseDeadDeliveries: 1,
		domain.EraseDLQ: 1, domain.EraseRejections: 1, domain.EraseJobs: 2, domain.EraseDeadWindows: 1,
		// EraseTenant counts the items of the tenant's partition and its
		// DLQ depth's shards as the store keeps them: its record, its API
		// key's reference, its depth shard and its job slots.
		domain.EraseStats: 1, domain.EraseEndpoints: 3, domain.EraseTenant: 4,
	}, argsOf[erasure.Args](t, got).Erasure.Erased, "the counts are of the checkpointed pages: the first event's 3 deliveries and its item, deleted by the step that stopped, are not counted")

	for id, d := range e.st.Deliveries() {
		require.Equal(t, tenantB, d.TenantID, "delivery %s", id)
	}
	require.Equal(t, before-5, len(e.st.Deliveries()), "A's 4 delivered (3 endpoints, then ep_1 only) and 1 dead")
	for id, tn := range o.tenantOf() {
		require.Equal(t, tenantB, tn, "outbox item %s", id)
	}
	for _, k := range e.st.APIKeys() {
		require.Equal(t, tenantB, k.TenantID)
	}
	for _, r := range e.st.Rejections() {
		require.Equal(t, tenantB, r.TenantID)
	}
	_, err = e.st.Tenant(ctx, tenantA)
	require.ErrorIs(t, err, store.ErrNotFound)
	eps, err := e.st.Endpoints(ctx, tenantA)
	require.NoError(t, err)
	require.Empty(t, eps)
	for _, id := range []string{"done_" + tenantA, "open_" + tenantA} {
		_, err := e.st.Job(ctx, id)
		require.ErrorIs(t, err, store.ErrNotFound)
	}
	_, err = e.st.DeadWindow(ctx, tenantA, "ep_1", e.t0)
	require.ErrorIs(t, err, store.ErrNotFound)
	stats, err := e.st.EndpointStats(ctx, tenantA, "ep_1", e.t0.Add(-time.Hour), e.t0.Add(time.Hour))
	require.NoError(t, err)
	require.Empty(t, stats)
	depths, err := e.st.DLQDepths(ctx)
	require.NoError(t, err)
	require.NotContains(t, depths, tenantA)
	require.Equal(t, 1, depths[tenantB])

	// B: untouched.
	owner, err := e.st.TenantForKey(ctx, "h_"+tenantB)
	require.NoError(t, err)
	require.Equal(t, tenantB, owner)
	for _, id := range []string{"done_" + tenantB, "open_" + tenantB} {
		_, err := e.st.Job(ctx, id)
		require.NoError(t, err)
	}
	_, err = e.st.DeadWindow(ctx, tenantB, "ep_1", e.t0)
	require.NoError(t, err)
	require.Len(t, o.tenantOf(), 2)
	e.q.mu.Lock()
	defer e.q.mu.Unlock()
	require.Len(t, e.q.dlq, 1, "only B's DLQ message is left")
	require.Contains(t, e.q.dlq[0].Body, tenantB)
	require.False(t, e.q.dlq[0].VisibleAt.After(e.clk.Now()), "released at once")
}

// A delivery.dead notice of a tenant being erased writes no summary: it
// would land in the outbox after the erasure went through it.
func TestDeadNoticeOfErasedTenantWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	out := &outboxNotices{events: map[string]opevent.Event{}}
	e.w.OpEvents = out
	ctx := context.Background()
	start, end := opevent.Window(e.t0, 5*time.Minute)
	for _, tenant := range []string{tenantA, tenantB} {
		_, err := e.st.CreateTenant(ctx, domain.Tenant{TenantID: tenant})
		require.NoError(t, err)
		_, err = e.st.AddDeath(ctx, tenant, "ep_1", start, end, domain.OpDeath{DeliveryID: "d_" + tenant, Reason: domain.ReasonAttemptsExhausted})
		require.NoError(t, err)
	}
	require.NoError(t, e.st.Tombstone(ctx, tenantA))
	for _, tenant := range []string{tenantA, tenantB} {
		require.NoError(t, e.w.SummarizeDeaths(ctx, opevent.DeadNotice{TenantID: tenant, EndpointID: "ep_1", WindowStart: start, WindowEnd: end}))
	}
	require.Len(t, out.events, 1, "the other tenant's summary only")
	for _, ev := range out.events {
		require.Equal(t, tenantB, ev.TenantID)
	}
}

// A sweep that finds in the DLQ the messages of a tenant being erased (left
// by an erasure that could not see them: someone held them hidden) deletes
// them, and writes no record for them: neither for the one whose record the
// erasure deleted nor for the one still pending, whose deaths it would
// otherwise record (the tenant's payloads, back in the state table). The
// other tenant's message is swept as before: its missed death recorded, the
// message kept.
// tenants creates tenants A and B, and tombstones those of erased.
func (e *env) tenants(t *testing.T, erased ...string) {
	t.Helper()
	ctx := context.Background()
	for _, tenant := range []string{tenantA, tenantB} {
		_, err := e.st.CreateTenant(ctx, domain.Tenant{TenantID: tenant})
		require.NoError(t, err)
	}
	for _, tenant := range erased {
		require.NoError(t, e.st.Tombstone(ctx, tenant))
	}
}

func TestSweepDeletesErasedTenantsMessages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.tenants(t, tenantA)
	sent := e.t0.Add(-time.Hour)
	e.st.put(domain.Delivery{DeliveryID: "a_pending", TenantID: tenantA, EndpointID: "ep_1", State: domain.StatePending, Attempts: 3})
	e.q.addDLQ(body("a_pending", tenantA, "ep_1", "order.created"), sent)
	e.q.addDLQ(body("a_gone", tenantA, "ep_1", "order.created"), sent)
	bID := e.q.addDLQ(body("b_gone", tenantB, "ep_1", "order.created"), sent)

	deleted, kept, err := e.w.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, deleted, "the erased tenant's two messages")
	require.Equal(t, 1, kept)
	_, ok := e.q.dlqState(bID)
	require.True(t, ok, "the other tenant's message stays")
	e.q.mu.Lock()
	require.Len(t, e.q.dlq, 1)
	e.q.mu.Unlock()

	_, err = e.st.Delivery(ctx, "a_gone")
	require.ErrorIs(t, err, store.ErrNotFound, "no record resurrected")
	d, err := e.st.Delivery(ctx, "a_pending")
	require.NoError(t, err)
	require.Equal(t, domain.StatePending, d.State, "no death recorded for the erased tenant")
	require.Empty(t, d.Message)
	depths, err := e.st.DLQDepths(ctx)
	require.NoError(t, err)
	require.Zero(t, depths[tenantA])
	b, err := e.st.Delivery(ctx, "b_gone")
	require.NoError(t, err)
	require.Equal(t, domain.StateDead, b.State, "the other tenant's missed death is recorded")
}

// hideDLQ receives every visible DLQ message, hidden for hide, as another
// consumer (a sweep, a redrive) does while an erasure runs.
func hideDLQ(t *testing.T, e *env, hide time.Duration) int {
	t.Helper()
	out, err := e.q.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(dlqURL), MaxNumberOfMessages: 10, VisibilityTimeout: int32(hide.Seconds())})
	require.NoError(t, err)
	return len(out.Messages)
}

// dlqTenants lists the tenants of the DLQ's messages, and whether each is
// visible now.
func dlqTenants(t *testing.T, e *env) map[string]bool {
	t.Helper()
	e.q.mu.Lock()
	defer e.q.mu.Unlock()
	out := map[string]bool{}
	for _, m := range e.q.dlq {
		msg, err := message.Decode(m.Body)
		require.NoError(t, err)
		out[msg.TenantID] = !m.VisibleAt.After(e.clk.Now())
	}
	return out
}

// An erasure whose DLQ pass overlaps someone else's (a sweep hides each
// message it reads) cannot see the messages they hold: it does not call the
// DLQ done while SQS counts more messages hidden than the pass holds, and
// its next step, sent a little later, finds and deletes the tenant's
// message once it is visible again. The other tenant's message stays, and
// is visible again.
func TestEraseTenantWaitsForDLQMessagesHiddenByOthers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	o := newFakeOutbox()
	e.w.Outbox = o
	seedErasure(t, e, o, tenantA)
	seedErasure(t, e, o, tenantB)
	j, err := startErasure(ctx, e, tenantA)
	require.NoError(t, err)

	require.Equal(t, 2, hideDLQ(t, e, 2*time.Second), "a sweep holds both tenants' DLQ messages")
	sent := len(e.q.sentTo(opsURL))
	require.NoError(t, e.w.Step(ctx, j.JobID))
	got := e.st.job(j.JobID)
	require.Equal(t, domain.StatusRunning, got.Status, "not done while others hold DLQ messages")
	require.Equal(t, domain.EraseDLQ, argsOf[erasure.Args](t, got).Erasure.Phase)
	next := e.q.sentTo(opsURL)
	require.Len(t, next, sent+1, "its next step is sent")
	require.Equal(t, int32(30), next[sent].Delay, "a little later")

	e.clk.Advance(30 * time.Second)
	e.run(t, e.w, j.JobID)
	got = e.st.job(j.JobID)
	require.Equal(t, domain.StatusCompleted, got.Status)
	require.Equal(t, 1, argsOf[erasure.Args](t, got).Erasure.Erased[domain.EraseDLQ], "the tenant's DLQ message, seen by the later step")
	require.Zero(t, argsOf[erasure.Args](t, got).Erasure.DLQLeftToSweep)
	require.Equal(t, map[string]bool{tenantB: true}, dlqTenants(t, e), "only the other tenant's message is left, visible")
}

// An erasure whose tenant's DLQ message is held hidden for longer than it
// waits (a redrive hides them 10 minutes) completes after a bounded number
// of waits and says how many messages it left to the sweep; the next sweep
// after they are visible again deletes the tenant's message and records
// nothing of it, and leaves the other tenant's.
func TestEraseTenantLeavesLongHiddenDLQMessagesToTheSweep(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	o := newFakeOutbox()
	e.w.Outbox = o
	seedErasure(t, e, o, tenantA)
	seedErasure(t, e, o, tenantB)
	j, err := startErasure(ctx, e, tenantA)
	require.NoError(t, err)

	require.Equal(t, 2, hideDLQ(t, e, 10*time.Minute), "a redrive holds both tenants' DLQ messages")
	steps := e.run(t, e.w, j.JobID)
	require.Greater(t, steps, 1, "it waited")
	got := e.st.job(j.JobID)
	require.Equal(t, domain.StatusCompleted, got.Status)
	require.Zero(t, argsOf[erasure.Args](t, got).Erasure.Erased[domain.EraseDLQ])
	require.Equal(t, 2, argsOf[erasure.Args](t, got).Erasure.DLQLeftToSweep)
	_, err = e.st.Delivery(ctx, "dead_"+tenantA)
	require.ErrorIs(t, err, store.ErrNotFound)

	e.clk.Advance(10 * time.Minute)
	deleted, kept, err := e.w.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, deleted, "the erased tenant's message")
	require.Equal(t, 1, kept, "the other tenant's, still dead")
	left := dlqTenants(t, e)
	require.Len(t, left, 1)
	require.Contains(t, left, tenantB, "the other tenant's message only (hidden a moment by the sweep)")
	_, err = e.st.Delivery(ctx, "dead_"+tenantA)
	require.ErrorIs(t, err, store.ErrNotFound, "no record written back")
	depths, err := e.st.DLQDepths(ctx)
	require.NoError(t, err)
	require.NotContains(t, depths, tenantA)
}
