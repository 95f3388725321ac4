package replay_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/replay"
	"github.com/hookline/hookline/internal/store"
)

// clock is a fixed clock that moves only when a test advances it.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// errInjected is the infrastructure failure the fakes inject.
var errInjected = errors.New("injected failure")

// fault makes the call-th call (1-based, counted per method from the fake's
// creation) of method fail. Before the call takes effect, or, with after,
// once it has (a write whose response was lost).
type fault struct {
	method string
	call   int
	after  bool
}

// faults counts calls per method and says which fail.
type faults struct {
	calls map[string]int
	rules []fault
}

// hit counts a call of method and returns the fault it triggers, if any.
func (f *faults) hit(method string) (before, after error) {
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[method]++
	for _, r := range f.rules {
		if r.method == method && r.call == f.calls[method] {
			err := fmt.Errorf("%s call %d: %w", method, r.call, errInjected)
			if r.after {
				return nil, err
			}
			return err, nil
		}
	}
	return nil, nil
}

// fakeStore is an in-memory replay.Store with the real store's semantics:
// deliveries by id carrying their tenant; a sparse dead-letter index (a
// delivery enters it when it dies and leaves it when it is claimed for
// replay), read oldest death first by ListDead with the store's range
// bounds, filters and opaque cursor (a full page always carries a cursor,
// as a DynamoDB Query stopped by its Limit does); ClaimForReplay's condition
// and its sentinels ErrNotFound (missing, or another tenant's), ErrNotDead
// and ErrReplayInFlight; ReleaseReplay's conditional release; SaveJob's
// optimistic version (ErrConflict); CreateJob's all-or-nothing write of a
// job and its place among its tenant's open jobs (ErrTooManyJobs at the
// limit), ReleaseJob's idempotent release, IdleJobs' index of jobs not
// completed (CompletedAt unset) by the time they were last saved, and
// ClaimSweep's one claim per gap. Values are deep-copied in and out, as a
// round trip through DynamoDB would. It is safe for concurrent use.
type fakeStore struct {
	mu  sync.Mutex
	now func() time.Time

	deliveries map[string]domain.Delivery
	deadIndex  map[string]string // delivery id -> gsi1sk ("<dead_at>#<id>")
	endpoints  map[string]domain.Endpoint
	jobs       map[string]domain.ReplayJob
	openJobs   map[string]map[string]bool // tenant -> ids of its open jobs
	sweptAt    *time.Time

	faults faults
	// beforeClaim, when set, runs (without the lock) at the start of every
	// ClaimForReplay: a test interleaves other work there.
	beforeClaim func(id, job string)
	// beforeRecord, when set, runs (without the lock) at the start of every
	// RecordAttemptIfUnchanged: a test makes or changes the record there.
	beforeRecord func(id string)
}

var _ replay.Store = (*fakeStore)(nil)

func newFakeStore(now func() time.Time) *fakeStore {
	return &fakeStore{
		now:        now,
		deliveries: map[string]domain.Delivery{},
		deadIndex:  map[string]string{},
		endpoints:  map[string]domain.Endpoint{},
		jobs:       map[string]domain.ReplayJob{},
		openJobs:   map[string]map[string]bool{},
	}
}

func timePtr(t time.Time) *time.Time { return &t }

func cloneTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	return timePtr(*t)
}

func cloneDelivery(d domain.Delivery) domain.Delivery {
	d.EnqueuedAt, d.DeliveredAt, d.DeadAt = cloneTime(d.EnqueuedAt), cloneTime(d.DeliveredAt), cloneTime(d.DeadAt)
	d.ReplayedAt, d.ReplayClaimedAt = cloneTime(d.ReplayedAt), cloneTime(d.ReplayClaimedAt)
	d.AttemptLog = slices.Clone(d.AttemptLog)
	return d
}

func cloneJob(j domain.ReplayJob) domain.ReplayJob {
	j.IDs, j.Pending = slices.Clone(j.IDs), slices.Clone(j.Pending)
	j.Skipped, j.SkippedIDs = maps.Clone(j.Skipped), maps.Clone(j.SkippedIDs)
	j.CompletedAt = cloneTime(j.CompletedAt)
	return j
}

func deadSK(d domain.Delivery) string {
	return d.DeadAt.UTC().Format(time.RFC3339Nano) + "#" + d.DeliveryID
}

// put writes a delivery as the delivery worker would have left it: a dead
// one (with its dead_at) is in the dead-letter index.
func (f *fakeStore) put(d domain.Delivery) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deliveries[d.DeliveryID] = cloneDelivery(d)
	delete(f.deadIndex, d.DeliveryID)
	if d.State == domain.StateDead && d.DeadAt != nil {
		f.deadIndex[d.DeliveryID] = deadSK(d)
	}
}

// get reads a delivery as stored, and whether it is in the dead index.
func (f *fakeStore) get(id string) (domain.Delivery, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, indexed := f.deadIndex[id]
	return cloneDelivery(f.deliveries[id]), indexed
}

func (f *fakeStore) putEndpoint(e domain.Endpoint) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.endpoints[e.TenantID+"/"+e.EndpointID] = e
}

func (f *fakeStore) fail(rules ...fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults.rules = append(f.faults.rules, rules...)
}

func (f *fakeStore) job(id string) domain.ReplayJob {
	f.mu.Lock()
	defer f.mu.Unlock()
	return cloneJob(f.jobs[id])
}

func (f *fakeStore) Job(_ context.Context, id string) (domain.ReplayJob, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, _ := f.faults.hit("Job"); err != nil {
		return domain.ReplayJob{}, err
	}
	j, ok := f.jobs[id]
	if !ok {
		return domain.ReplayJob{}, fmt.Errorf("replay job %s: %w", id, store.ErrNotFound)
	}
	return cloneJob(j), nil
}

func (f *fakeStore) SaveJob(_ context.Context, j *domain.ReplayJob) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	before, after := f.faults.hit("SaveJob")
	if before != nil {
		return before
	}
	prev := j.Version
	j.Version++
	j.UpdatedAt = f.now().UTC()
	if prev == 0 {
		j.CreatedAt = j.UpdatedAt
	}
	old, exists := f.jobs[j.JobID]
	if (prev == 0 && exists) || (prev != 0 && (!exists || old.Version != prev)) {
		j.Version = prev
		return fmt.Errorf("replay job %s: %w", j.JobID, store.ErrConflict)
	}
	f.jobs[j.JobID] = cloneJob(*j)
	if after != nil {
		j.Version = prev // as the real store does on any error
		return after
	}
	return nil
}

func (f *fakeStore) CreateJob(ctx context.Context, j *domain.ReplayJob, limit int) error {
	if j.Version != 0 {
		return fmt.Errorf("create replay job %s: version %d: %w", j.JobID, j.Version, store.ErrConflict)
	}
	if j.TenantID == "" || limit <= 0 {
		return f.SaveJob(ctx, j)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, _ := f.faults.hit("CreateJob"); err != nil {
		return err
	}
	if _, exists := f.jobs[j.JobID]; exists {
		return fmt.Errorf("replay job %s: %w", j.JobID, store.ErrConflict)
	}
	if len(f.openJobs[j.TenantID]) >= limit {
		return fmt.Errorf("tenant %s: %d replay jobs open: %w", j.TenantID, limit, store.ErrTooManyJobs)
	}
	j.Version = 1
	j.UpdatedAt = f.now().UTC()
	j.CreatedAt = j.UpdatedAt
	f.jobs[j.JobID] = cloneJob(*j)
	if f.openJobs[j.TenantID] == nil {
		f.openJobs[j.TenantID] = map[string]bool{}
	}
	f.openJobs[j.TenantID][j.JobID] = true
	return nil
}

func (f *fakeStore) TenantJobs(_ context.Context, tenantID string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, _ := f.faults.hit("TenantJobs"); err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(f.openJobs[tenantID])), nil
}

func (f *fakeStore) ReleaseJob(_ context.Context, tenantID, jobID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, _ := f.faults.hit("ReleaseJob"); err != nil {
		return err
	}
	delete(f.openJobs[tenantID], jobID)
	return nil
}

func (f *fakeStore) IdleJobs(_ context.Context, before time.Time, limit int) ([]domain.ReplayJob, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, _ := f.faults.hit("IdleJobs"); err != nil {
		return nil, err
	}
	var out []domain.ReplayJob
	for _, j := range f.jobs {
		if j.CompletedAt == nil && j.UpdatedAt.Before(before) {
			out = append(out, cloneJob(j))
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].UpdatedAt.Before(out[b].UpdatedAt) })
	return out[:min(len(out), limit)], nil
}

func (f *fakeStore) ClaimSweep(_ context.Context, gap time.Duration) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, _ := f.faults.hit("ClaimSweep"); err != nil {
		return false, err
	}
	now := f.now().UTC()
	if f.sweptAt != nil && f.sweptAt.After(now.Add(-gap)) {
		return false, nil
	}
	f.sweptAt = &now
	return true, nil
}

// open returns the ids of a tenant's open jobs, as CreateJob counts them.
func (f *fakeStore) open(tenantID string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Sorted(maps.Keys(f.openJobs[tenantID]))
}

func (f *fakeStore) Delivery(_ context.Context, id string) (domain.Delivery, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, _ := f.faults.hit("Delivery"); err != nil {
		return domain.Delivery{}, err
	}
	d, ok := f.deliveries[id]
	if !ok {
		return domain.Delivery{}, fmt.Errorf("delivery %s: %w", id, store.ErrNotFound)
	}
	return cloneDelivery(d), nil
}

func (f *fakeStore) Load(_ context.Context, ids []string, refs []store.EndpointRef) (store.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, _ := f.faults.hit("Load"); err != nil {
		return store.Snapshot{}, err
	}
	if len(ids) > 100 || len(refs) > 0 {
		return store.Snapshot{}, fmt.Errorf("the worker reads deliveries only, at most 100 at once; got %d and %d endpoints", len(ids), len(refs))
	}
	snap := store.Snapshot{Deliveries: map[string]domain.Delivery{}, Endpoints: map[store.EndpointRef]domain.Endpoint{}}
	for _, id := range ids {
		if d, ok := f.deliveries[id]; ok {
			snap.Deliveries[id] = cloneDelivery(d)
		}
	}
	return snap, nil
}

func (f *fakeStore) Endpoint(_ context.Context, tenantID, endpointID string) (domain.Endpoint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, _ := f.faults.hit("Endpoint"); err != nil {
		return domain.Endpoint{}, err
	}
	e, ok := f.endpoints[tenantID+"/"+endpointID]
	if !ok {
		return domain.Endpoint{}, fmt.Errorf("endpoint %s of tenant %s: %w", endpointID, tenantID, store.ErrNotFound)
	}
	return e, nil
}

type deadCursor struct{ ID, SK string }

func (f *fakeStore) ListDead(_ context.Context, tenantID string, flt domain.DeadFilter, limit int, cursor string) ([]domain.Delivery, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, _ := f.faults.hit("ListDead"); err != nil {
		return nil, "", err
	}
	if limit < 1 {
		return nil, "", fmt.Errorf("list dead deliveries: limit %d: ValidationException", limit)
	}
	lo, hi := "0", "9"
	if !flt.Since.IsZero() {
		lo = flt.Since.UTC().Format(time.RFC3339Nano)
	}
	if !flt.Until.IsZero() {
		hi = flt.Until.UTC().Format(time.RFC3339Nano) + "#~"
	}
	after := ""
	if cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(cursor)
		var c deadCursor
		if err != nil || json.Unmarshal(raw, &c) != nil || c.ID == "" || c.SK == "" {
			return nil, "", fmt.Errorf("cursor: %w", store.ErrBadCursor)
		}
		after = c.SK
	}
	var sks []string
	byKey := map[string]string{}
	for id, sk := range f.deadIndex {
		d := f.deliveries[id]
		if d.TenantID != tenantID || sk < lo || sk > hi || (after != "" && sk <= after) {
			continue
		}
		if (flt.EndpointID != "" && d.EndpointID != flt.EndpointID) || (flt.EventType != "" && d.EventType != flt.EventType) {
			continue
		}
		sks = append(sks, sk)
		byKey[sk] = id
	}
	sort.Strings(sks)
	var out []domain.Delivery
	for _, sk := range sks {
		out = append(out, cloneDelivery(f.deliveries[byKey[sk]]))
		if len(out) == limit {
			raw, _ := json.Marshal(deadCursor{ID: byKey[sk], SK: sk})
			return out, base64.RawURLEncoding.EncodeToString(raw), nil
		}
	}
	return out, "", nil
}

func (f *fakeStore) ClaimForReplay(_ context.Context, id, tenantID, job string, stale time.Duration) (domain.Delivery, error) {
	if hook := f.hook(); hook != nil {
		hook(id, job)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	before, after := f.faults.hit("ClaimForReplay")
	if before != nil {
		return domain.Delivery{}, before
	}
	now := f.now().UTC()
	d, ok := f.deliveries[id]
	if !ok || (tenantID != "" && d.TenantID != tenantID) {
		return domain.Delivery{}, fmt.Errorf("delivery %s: %w", id, store.ErrNotFound)
	}
	staleClaim := d.ReplayClaimedAt != nil && d.ReplayClaimedAt.Before(now.Add(-stale))
	ok = (d.State == domain.StateDead && d.ReplayJob == "") ||
		(d.State != domain.StateDelivered && staleClaim) ||
		(d.ReplayJob == job && d.State != domain.StateDelivered)
	if !ok {
		if d.State == domain.StateDead || d.ReplayJob != "" {
			return cloneDelivery(d), fmt.Errorf("delivery %s: %w", id, store.ErrReplayInFlight)
		}
		return cloneDelivery(d), fmt.Errorf("delivery %s is %s: %w", id, d.State, store.ErrNotDead)
	}
	d.State, d.ReplayJob = domain.StatePending, job
	d.ReplayClaimedAt, d.ReplayedAt = timePtr(now), timePtr(now)
	f.deliveries[id] = d
	delete(f.deadIndex, id)
	if after != nil {
		return domain.Delivery{}, after
	}
	return cloneDelivery(d), nil
}

func (f *fakeStore) hook() func(id, job string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.beforeClaim
}

// RecordAttemptIfUnchanged, as the sweep uses it: on the record as d was
// read (none when d has no state; else in d's state after d's attempts), a
// dead outcome marks the delivery dead, with its message, in the dead index;
// on any other record, nothing is written and the error wraps
// store.ErrConflict. A delivered delivery is left alone.
func (f *fakeStore) RecordAttemptIfUnchanged(_ context.Context, d domain.Delivery, a domain.Attempt, o domain.Outcome) error {
	f.mu.Lock()
	hook := f.beforeRecord
	f.mu.Unlock()
	if hook != nil {
		hook(d.DeliveryID)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, _ := f.faults.hit("RecordAttemptIfUnchanged"); err != nil {
		return err
	}
	cur, ok := f.deliveries[d.DeliveryID]
	if ok != (d.State != "") || (ok && (cur.State != d.State || cur.Attempts != d.Attempts)) {
		return fmt.Errorf("record attempt of delivery %s: it changed since it was read: %w", d.DeliveryID, store.ErrConflict)
	}
	if !ok {
		cur = cloneDelivery(d) // the first attempt writes the record
	}
	if cur.State == domain.StateDelivered {
		return nil
	}
	cur.State, cur.Attempts = o.State, cur.Attempts+1
	cur.AttemptLog = append(cur.AttemptLog, a)
	if o.State == domain.StateDead {
		cur.DeadReason, cur.Message, cur.DeadAt = o.DeadReason, o.Message, timePtr(a.At)
		f.deadIndex[cur.DeliveryID] = deadSK(cur)
	}
	f.deliveries[cur.DeliveryID] = cur
	return nil
}

func (f *fakeStore) ReleaseReplay(_ context.Context, id, job string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	before, after := f.faults.hit("ReleaseReplay")
	if before != nil {
		return before
	}
	d, ok := f.deliveries[id]
	if ok && d.ReplayJob == job { // else the condition fails, which is no error
		d.ReplayedBy, d.ReplayJob, d.ReplayClaimedAt = job, "", nil
		f.deliveries[id] = d
	}
	return after
}

// Queue URLs of the tests.
const (
	deliveryURL = "https://sqs.test/1/delivery"
	dlqURL      = "https://sqs.test/1/delivery-dlq"
	jobsURL     = "https://sqs.test/1/replay-jobs"
	opsURL      = "https://sqs.test/1/replay-ops"
)

// sentMsg is one message a test's worker sent.
type sentMsg struct {
	Queue string
	Body  string
	Delay int32
	At    time.Time
	Batch bool
}

// dlqMsg is a message in the fake DLQ.
type dlqMsg struct {
	ID, Body  string
	SentAt    time.Time
	VisibleAt time.Time
	Receipt   string
	Receives  int
	// ReceivedAt is the time of the receive that issued Receipt.
	ReceivedAt time.Time
}

// visChange records a ChangeMessageVisibility call.
type visChange struct {
	MessageID string
	Timeout   int32
}

// fakeQueue is an in-memory replay.Queue: it records every message sent (to
// the delivery, jobs and operations queues) with its delay, and holds a dead-letter
// queue that ReceiveMessage reads as SQS does: only visible messages, at
// most MaxNumberOfMessages (and at most perReceive, as SQS may return
// fewer), each then hidden for the VisibilityTimeout and given a new
// receipt handle, with the SentTimestamp attribute when asked for it.
// DeleteMessage and ChangeMessageVisibility take a current receipt handle.
// Requests SQS would reject (delays over 900 s, empty bodies or over 256
// KiB, visibility timeouts outside 0..43200 s or ending more than 12 h after
// the message's receive, and batches that message.CheckBatch refuses: over
// 10 entries or 256 KiB, repeated ids, characters SQS refuses) fail. It is
// safe for concurrent use.
type fakeQueue struct {
	mu  sync.Mutex
	now func() time.Time

	sends      []sentMsg
	dlq        []*dlqMsg
	deleted    []string // ids of DLQ messages deleted
	visibility []visChange
	perReceive int
	nextID     int

	faults faults
	// failEntry, when set, makes SendMessageBatch report the entries it
	// returns true for as failed (not sent).
	failEntry func(call int, body string) bool
}

var _ replay.Queue = (*fakeQueue)(nil)

func newFakeQueue(now func() time.Time) *fakeQueue { return &fakeQueue{now: now} }

func (q *fakeQueue) fail(rules ...fault) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.faults.rules = append(q.faults.rules, rules...)
}

// addDLQ puts a message in the DLQ as sent at sentAt, visible now.
func (q *fakeQueue) addDLQ(body string, sentAt time.Time) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.nextID++
	id := "m-" + strconv.Itoa(q.nextID)
	q.dlq = append(q.dlq, &dlqMsg{ID: id, Body: body, SentAt: sentAt})
	return id
}

// dlqState returns a copy of a DLQ message, and whether it is still there.
func (q *fakeQueue) dlqState(id string) (dlqMsg, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range q.dlq {
		if m.ID == id {
			return *m, true
		}
	}
	return dlqMsg{}, false
}

// sentTo returns the messages sent to any of the queues urls, in order.
func (q *fakeQueue) sentTo(urls ...string) []sentMsg {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []sentMsg
	for _, m := range q.sends {
		if slices.Contains(urls, m.Queue) {
			out = append(out, m)
		}
	}
	return out
}

// replayed counts the delivery messages sent back, by delivery id.
func (q *fakeQueue) replayed() map[string]int {
	n := map[string]int{}
	for _, m := range q.sentTo(deliveryURL) {
		msg, err := message.Decode(m.Body)
		if err != nil {
			panic("a replayed message does not decode: " + err.Error())
		}
		n[msg.DeliveryID]++
	}
	return n
}

func checkQueue(url *string) error {
	if url == nil || (*url != deliveryURL && *url != dlqURL && *url != jobsURL && *url != opsURL) {
		return errors.New("AWS.SimpleQueueService.NonExistentQueue")
	}
	return nil
}

func checkSend(body *string, delay int32) error {
	if body == nil || *body == "" {
		return errors.New("InvalidParameterValue: the message body is empty")
	}
	if len(*body) > message.MaxBatchBytes {
		return fmt.Errorf("InvalidParameterValue: a message of %d bytes is over SQS's 256 KiB", len(*body))
	}
	if delay < 0 || delay > 900 {
		return fmt.Errorf("InvalidParameterValue: DelaySeconds %d is not in 0..900", delay)
	}
	return nil
}

func (q *fakeQueue) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	before, after := q.faults.hit("SendMessage")
	if before != nil {
		return nil, before
	}
	if err := checkQueue(in.QueueUrl); err != nil {
		return nil, err
	}
	if err := checkSend(in.MessageBody, in.DelaySeconds); err != nil {
		return nil, err
	}
	q.sends = append(q.sends, sentMsg{Queue: *in.QueueUrl, Body: *in.MessageBody, Delay: in.DelaySeconds, At: q.now()})
	if after != nil {
		return nil, after
	}
	q.nextID++
	return &sqs.SendMessageOutput{MessageId: strPtr("m-" + strconv.Itoa(q.nextID))}, nil
}

func (q *fakeQueue) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	before, after := q.faults.hit("SendMessageBatch")
	if before != nil {
		return nil, before
	}
	if err := checkQueue(in.QueueUrl); err != nil {
		return nil, err
	}
	if err := message.CheckBatch(in.Entries); err != nil {
		return nil, err
	}
	for _, e := range in.Entries {
		if err := checkSend(e.MessageBody, e.DelaySeconds); err != nil {
			return nil, err
		}
	}
	out := &sqs.SendMessageBatchOutput{}
	call := q.faults.calls["SendMessageBatch"]
	for _, e := range in.Entries {
		if q.failEntry != nil && q.failEntry(call, *e.MessageBody) {
			out.Failed = append(out.Failed, sqstypes.BatchResultErrorEntry{Id: e.Id, Code: strPtr("InternalError"), Message: strPtr("injected entry failure"), SenderFault: false})
			continue
		}
		q.sends = append(q.sends, sentMsg{Queue: *in.QueueUrl, Body: *e.MessageBody, Delay: e.DelaySeconds, At: q.now(), Batch: true})
		q.nextID++
		out.Successful = append(out.Successful, sqstypes.SendMessageBatchResultEntry{Id: e.Id, MessageId: strPtr("m-" + strconv.Itoa(q.nextID))})
	}
	if after != nil {
		return nil, after
	}
	return out, nil
}

func (q *fakeQueue) ReceiveMessage(_ context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err, _ := q.faults.hit("ReceiveMessage"); err != nil {
		return nil, err
	}
	if in.QueueUrl == nil || *in.QueueUrl != dlqURL {
		return nil, errors.New("the fake receives from the DLQ only")
	}
	if in.MaxNumberOfMessages < 1 || in.MaxNumberOfMessages > 10 {
		return nil, fmt.Errorf("InvalidParameterValue: MaxNumberOfMessages %d", in.MaxNumberOfMessages)
	}
	if in.VisibilityTimeout < 0 || in.VisibilityTimeout > 43200 {
		return nil, fmt.Errorf("InvalidParameterValue: VisibilityTimeout %d", in.VisibilityTimeout)
	}
	wantSent := slices.Contains(in.MessageSystemAttributeNames, sqstypes.MessageSystemAttributeNameSentTimestamp) ||
		slices.Contains(in.MessageSystemAttributeNames, sqstypes.MessageSystemAttributeNameAll)
	n := int(in.MaxNumberOfMessages)
	if q.perReceive > 0 {
		n = min(n, q.perReceive)
	}
	now := q.now()
	out := &sqs.ReceiveMessageOutput{}
	for _, m := range q.dlq {
		if len(out.Messages) == n {
			break
		}
		if m.VisibleAt.After(now) {
			continue
		}
		q.nextID++
		m.Receipt = "rh-" + strconv.Itoa(q.nextID)
		m.ReceivedAt = now
		m.VisibleAt = now.Add(time.Duration(in.VisibilityTimeout) * time.Second)
		m.Receives++
		msg := sqstypes.Message{MessageId: strPtr(m.ID), Body: strPtr(m.Body), ReceiptHandle: strPtr(m.Receipt),
			Attributes: map[string]string{string(sqstypes.MessageSystemAttributeNameApproximateReceiveCount): strconv.Itoa(m.Receives)}}
		if wantSent {
			msg.Attributes[string(sqstypes.MessageSystemAttributeNameSentTimestamp)] = strconv.FormatInt(m.SentAt.UnixMilli(), 10)
		}
		out.Messages = append(out.Messages, msg)
	}
	return out, nil
}

func (q *fakeQueue) byReceipt(h *string) (int, error) {
	if h == nil {
		return 0, errors.New("MissingParameter: ReceiptHandle")
	}
	for i, m := range q.dlq {
		if m.Receipt == *h {
			return i, nil
		}
	}
	return 0, fmt.Errorf("ReceiptHandleIsInvalid: %s", *h)
}

func (q *fakeQueue) DeleteMessage(_ context.Context, in *sqs.DeleteMessageInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err, _ := q.faults.hit("DeleteMessage"); err != nil {
		return nil, err
	}
	if in.QueueUrl == nil || *in.QueueUrl != dlqURL {
		return nil, errors.New("the fake deletes from the DLQ only")
	}
	i, err := q.byReceipt(in.ReceiptHandle)
	if err != nil {
		return nil, err
	}
	q.deleted = append(q.deleted, q.dlq[i].ID)
	q.dlq = slices.Delete(q.dlq, i, i+1)
	return &sqs.DeleteMessageOutput{}, nil
}

func (q *fakeQueue) ChangeMessageVisibility(_ context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err, _ := q.faults.hit("ChangeMessageVisibility"); err != nil {
		return nil, err
	}
	if in.QueueUrl == nil || *in.QueueUrl != dlqURL {
		return nil, errors.New("the fake changes visibility in the DLQ only")
	}
	i, err := q.byReceipt(in.ReceiptHandle)
	if err != nil {
		return nil, err
	}
	if in.VisibilityTimeout < 0 || in.VisibilityTimeout > 43200 {
		return nil, fmt.Errorf("InvalidParameterValue: VisibilityTimeout %d", in.VisibilityTimeout)
	}
	if held := q.now().Sub(q.dlq[i].ReceivedAt); held+time.Duration(in.VisibilityTimeout)*time.Second > 12*time.Hour {
		return nil, fmt.Errorf("InvalidParameterValue: VisibilityTimeout %d, received %s ago: hidden past 12 h from the receive", in.VisibilityTimeout, held)
	}
	q.dlq[i].VisibleAt = q.now().Add(time.Duration(in.VisibilityTimeout) * time.Second)
	q.visibility = append(q.visibility, visChange{MessageID: q.dlq[i].ID, Timeout: in.VisibilityTimeout})
	return &sqs.ChangeMessageVisibilityOutput{}, nil
}

func strPtr(s string) *string { return &s }
