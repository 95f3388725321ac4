package background_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/background"
	"github.com/hookline/hookline/internal/dlq"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/replay"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/storetest"
	"github.com/hookline/hookline/internal/trace"
	"github.com/stretchr/testify/require"
)

const (
	tenantA = "ten_a"
	tenantB = "ten_b"
)

// env is a worker on the fakes, at a fixed time.
type env struct {
	clk *storetest.Clock
	st  *testStore
	q   *fakeQueue
	w   *background.Worker
	t0  time.Time
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clk := newClock()
	st := newFakeStore(clk.Now)
	q := newFakeQueue(clk.Now)
	w := &background.Worker{
		Store: st.ports(), Queue: q,
		DeliveryQueueURL: deliveryURL, DLQURL: dlqURL, ArrivalsURL: arrivalsURL, JobsQueueURL: jobsURL, OpsQueueURL: opsURL,
		Config: jobs.Config{Rate: 10}, Now: clk.Now, Log: slog.New(slog.DiscardHandler),
	}
	e := &env{clk: clk, st: st, q: q, w: w, t0: clk.Now()}
	for _, ep := range []domain.Endpoint{
		{TenantID: tenantA, EndpointID: "ep_1"},
		{TenantID: tenantA, EndpointID: "ep_2"},
		{TenantID: tenantA, EndpointID: "ep_off", Disabled: true, DisabledReason: "consecutive_failures"},
		{TenantID: tenantB, EndpointID: "ep_1"},
	} {
		st.putEndpoint(ep)
	}
	return e
}

// body is the delivery message of a delivery, as the delivery queue carries it.
func body(id, tenant, endpoint, typ string) string {
	b, _ := json.Marshal(message.Message{DeliveryID: id, TenantID: tenant, EndpointID: endpoint, EventID: "evt_" + id,
		EventType: typ, OccurredAt: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), Payload: json.RawMessage(`{"order":"` + id + `"}`)})
	return string(b)
}

// dead stores a dead delivery, with its message, that died at.
func (e *env) dead(id, tenant, endpoint, typ string, at time.Time) domain.Delivery {
	d := domain.Delivery{DeliveryID: id, TenantID: tenant, EndpointID: endpoint, EventID: "evt_" + id, EventType: typ,
		State: domain.StateDead, CreatedAt: at.Add(-time.Hour), DeadAt: timePtr(at), DeadReason: "attempts_exhausted",
		Attempts: 8, LastStatus: 503, Message: body(id, tenant, endpoint, typ)}
	e.st.put(d)
	return d
}

// deadN stores n dead deliveries of tenant A on ep_1, dying a minute apart.
func (e *env) deadN(prefix string, n int) []string {
	var ids []string
	for i := range n {
		id := fmt.Sprintf("%s%03d", prefix, i)
		e.dead(id, tenantA, "ep_1", "order.created", e.t0.Add(-2*time.Hour+time.Duration(i)*time.Minute))
		ids = append(ids, id)
	}
	return ids
}

// start records a job through Worker.Start and returns its id.
func (e *env) start(t *testing.T, j domain.Job) string {
	t.Helper()
	j.Status = domain.StatusQueued
	require.NoError(t, e.w.Start(context.Background(), &j))
	require.Equal(t, 1, j.Version)
	return j.JobID
}

// run steps a job until it completes and returns how many steps it took.
func (e *env) run(t *testing.T, w *background.Worker, id string) int {
	t.Helper()
	for n := 1; n <= 100; n++ {
		require.NoError(t, w.Step(context.Background(), id))
		if e.st.job(id).Status == domain.StatusCompleted {
			return n
		}
	}
	t.Fatalf("job %s did not complete in 100 steps", id)
	return 0
}

// jobMessages decodes the messages sent to the jobs and operations queues,
// in the order sent.
func (e *env) jobMessages(t *testing.T) []jobs.Message {
	t.Helper()
	var out []jobs.Message
	for _, m := range e.q.sentTo(jobsURL, opsURL) {
		var msg jobs.Message
		require.NoError(t, json.Unmarshal([]byte(m.Body), &msg))
		out = append(out, msg)
	}
	return out
}

// requireNoLoss checks the replay guarantee on every given delivery: it was
// sent back at least once (and then it is pending, its claim released), or
// it is still dead and in the dead-letter index, never claimed and unsent.
func (e *env) requireNoLoss(t *testing.T, ids []string) {
	t.Helper()
	sent := e.q.replayed()
	for _, id := range ids {
		d, indexed := e.st.get(id)
		require.Empty(t, d.ReplayClaimedBy, "delivery %s is left claimed", id)
		if sent[id] == 0 {
			require.Equal(t, domain.StateDead, d.State, "delivery %s was neither sent nor left dead", id)
			require.True(t, indexed, "dead delivery %s is not in the dead-letter index", id)
		}
	}
}

func TestReplayByIDs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	at := e.t0.Add(-time.Hour)
	rows := []struct {
		name   string
		id     string
		setup  func(id string)
		reason string // "" when the delivery is to be replayed
	}{
		{"dead, own tenant", "dl_a1", func(id string) { e.dead(id, tenantA, "ep_1", "order.created", at) }, ""},
		{"dead, own tenant, other endpoint", "dl_a2", func(id string) { e.dead(id, tenantA, "ep_2", "order.paid", at.Add(time.Minute)) }, ""},
		{"replayed before and dead again", "dl_a3", func(id string) {
			d := e.dead(id, tenantA, "ep_1", "order.created", at)
			d.ReplayedAt, d.ReplayedBy = timePtr(at.Add(-time.Hour)), "rj_old"
			e.st.put(d)
		}, ""},
		{"another tenant's", "dl_b1", func(id string) { e.dead(id, tenantB, "ep_1", "order.created", at) }, "not_found"},
		{"missing", "dl_missing", func(string) {}, "not_found"},
		{"pending", "dl_p1", func(id string) {
			e.st.put(domain.Delivery{DeliveryID: id, TenantID: tenantA, EndpointID: "ep_1", EventType: "order.created", State: domain.StatePending, Message: "{}"})
		}, "not_dead"},
		{"delivered", "dl_p2", func(id string) {
			e.st.put(domain.Delivery{DeliveryID: id, TenantID: tenantA, EndpointID: "ep_1", EventType: "order.created", State: domain.StateDelivered, DeliveredAt: timePtr(at)})
		}, "not_dead"},
		{"endpoint disabled", "dl_off", func(id string) { e.dead(id, tenantA, "ep_off", "order.created", at) }, "endpoint_disabled"},
		{"endpoint deleted", "dl_gone", func(id string) { e.dead(id, tenantA, "ep_gone", "order.created", at) }, "endpoint_disabled"},
		{"no message", "dl_nomsg", func(id string) {
			d := e.dead(id, tenantA, "ep_1", "order.created", at)
			d.Message = ""
			e.st.put(d)
		}, "no_message"},
		{"claimed by a running job", "dl_inflight", func(id string) {
			d := e.dead(id, tenantA, "ep_1", "order.created", at)
			d.ReplayClaimedBy, d.ReplayClaimedAt = "rj_other", timePtr(e.t0.Add(-time.Minute))
			e.st.put(d)
		}, "replay_in_progress"},
		{"claimed by a job that stopped (stale claim)", "dl_stale", func(id string) {
			d := e.dead(id, tenantA, "ep_1", "order.created", at)
			d.ReplayClaimedBy, d.ReplayClaimedAt = "rj_stopped", timePtr(e.t0.Add(-time.Hour))
			e.st.put(d)
		}, ""},
	}
	var ids []string
	before := map[string]domain.Delivery{}
	for _, r := range rows {
		r.setup(r.id)
		ids = append(ids, r.id)
		before[r.id], _ = e.st.get(r.id)
	}
	e.clk.Advance(time.Second)
	job := e.start(t, domain.Job{JobID: "rj_ids", TenantID: tenantA, Kind: domain.KindIDs, Args: &replay.IDs{IDs: ids}})
	require.Equal(t, 1, e.run(t, e.w, job))

	sent := e.q.replayed()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			d, indexed := e.st.get(r.id)
			if r.reason == "" {
				require.Equal(t, 1, sent[r.id])
				require.Equal(t, domain.StatePending, d.State)
				require.False(t, indexed, "a replayed delivery leaves the dead-letter index")
				require.Equal(t, job, d.ReplayedBy)
				require.Empty(t, d.ReplayClaimedBy, "the claim is released")
				require.Nil(t, d.ReplayClaimedAt)
				require.Equal(t, e.clk.Now(), *d.ReplayedAt)
				require.NotContains(t, e.st.job(job).SkippedIDs, r.id)
				return
			}
			require.Zero(t, sent[r.id])
			require.Equal(t, before[r.id], d, "a skipped delivery is left as it was")
			require.Equal(t, r.reason, e.st.job(job).SkippedIDs[r.id])
		})
	}

	t.Run("sent messages are the stored ones, marked replayed", func(t *testing.T) {
		msgs := e.q.sentTo(deliveryURL)
		require.Len(t, msgs, 4)
		for i, id := range []string{"dl_a1", "dl_a2", "dl_a3"} {
			require.True(t, sameButReplayed(t, msgs[i].Body, before[id].Message), "same message, so the same delivery id and idempotency key; its age counts from the replay")
			require.True(t, msgs[i].Batch)
			m, err := message.Decode(msgs[i].Body)
			require.NoError(t, err)
			require.Equal(t, id, m.DeliveryID)
		}
	})
	t.Run("job counts and completion", func(t *testing.T) {
		j := e.st.job(job)
		require.Equal(t, domain.StatusCompleted, j.Status)
		require.Equal(t, e.clk.Now(), *j.CompletedAt)
		require.Nil(t, j.Pending)
		require.Equal(t, len(rows), j.Matched)
		require.Equal(t, 4, j.Replayed)
		require.Zero(t, j.Failed)
		require.Equal(t, map[string]int{"not_found": 2, "not_dead": 2, "endpoint_disabled": 2, "no_message": 1, "replay_in_progress": 1}, j.Skipped)
		require.Len(t, j.SkippedIDs, 8)
		require.Equal(t, 1, j.Steps)
		require.Equal(t, strconv.Itoa(len(ids)), j.Cursor)
	})
	t.Run("job message, then a sweep once complete", func(t *testing.T) {
		require.Equal(t, []jobs.Message{jobs.Step(job), {Kind: jobs.KindSweep, TenantID: tenantA}, {Kind: jobs.KindSweep, TenantID: tenantA}}, e.jobMessages(t))
		require.Len(t, e.q.sentTo(jobsURL), 1, "the job's message on the jobs queue")
		require.Equal(t, int32(0), e.q.sentTo(jobsURL)[0].Delay)
		sweeps := e.q.sentTo(opsURL)
		require.Len(t, sweeps, 2, "the sweeps on the operations queue")
		require.Equal(t, int32(5), sweeps[0].Delay)
		require.Equal(t, int32(90), sweeps[1].Delay, "and a second sweep later")
	})
	t.Run("a completed job's message is a no-op", func(t *testing.T) {
		n := len(e.q.sends)
		require.NoError(t, e.w.Step(context.Background(), job))
		require.Len(t, e.q.sends, n)
	})
}

func TestReplayByIDsInSteps(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := e.deadN("dl_", 5)
	e.w.StepSends, e.w.Rate = 2, 1
	job := e.start(t, domain.Job{JobID: "rj_steps", TenantID: tenantA, Kind: domain.KindIDs, Args: &replay.IDs{IDs: ids}})
	require.Equal(t, 3, e.run(t, e.w, job))
	require.Equal(t, map[string]int{"dl_000": 1, "dl_001": 1, "dl_002": 1, "dl_003": 1, "dl_004": 1}, e.q.replayed())
	require.Equal(t, []jobs.Message{jobs.Step(job), jobs.Step(job), jobs.Step(job), {Kind: jobs.KindSweep, TenantID: tenantA}, {Kind: jobs.KindSweep, TenantID: tenantA}}, e.jobMessages(t))
	for _, m := range e.q.sentTo(jobsURL)[1:3] {
		require.Equal(t, int32(2), m.Delay, "when the step's 2 sends at 1/s are due")
	}
	j := e.st.job(job)
	require.Equal(t, 5, j.Matched)
	require.Equal(t, 5, j.Replayed)
	require.Equal(t, 3, j.Steps)
}

func TestReplayByFilter(t *testing.T) {
	t.Parallel()
	t0 := newClock().Now()
	fixture := func(e *env) {
		e.dead("f1", tenantA, "ep_1", "order.created", t0.Add(-50*time.Minute))
		e.dead("f2", tenantA, "ep_1", "order.paid", t0.Add(-40*time.Minute))
		e.dead("f3", tenantA, "ep_2", "order.created", t0.Add(-30*time.Minute))
		e.dead("f4", tenantA, "ep_1", "order.created", t0.Add(-20*time.Minute))
		e.dead("f5", tenantA, "ep_1", "order.created", t0.Add(-10*time.Minute))
		e.st.put(domain.Delivery{DeliveryID: "p1", TenantID: tenantA, EndpointID: "ep_1", EventType: "order.created", State: domain.StatePending, Message: "{}"})
		e.dead("o1", tenantB, "ep_1", "order.created", t0.Add(-45*time.Minute))
	}
	cases := []struct {
		name   string
		filter domain.DeadFilter
		want   []string // in the order sent: oldest death first
	}{
		{"everything of the tenant", domain.DeadFilter{}, []string{"f1", "f2", "f3", "f4", "f5"}},
		{"endpoint", domain.DeadFilter{EndpointID: "ep_1"}, []string{"f1", "f2", "f4", "f5"}},
		{"event type", domain.DeadFilter{EventType: "order.created"}, []string{"f1", "f3", "f4", "f5"}},
		{"endpoint and type", domain.DeadFilter{EndpointID: "ep_1", EventType: "order.created"}, []string{"f1", "f4", "f5"}},
		{"time range", domain.DeadFilter{Since: t0.Add(-35 * time.Minute), Until: t0.Add(-15 * time.Minute)}, []string{"f3", "f4"}},
		{"until is inclusive", domain.DeadFilter{Until: t0.Add(-30 * time.Minute)}, []string{"f1", "f2", "f3"}},
		{"nothing matches", domain.DeadFilter{EventType: "refund.issued"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			fixture(e)
			job := e.start(t, domain.Job{JobID: "rj_f", TenantID: tenantA, Kind: domain.KindFilter, Args: &replay.Filter{Filter: c.filter}})
			e.run(t, e.w, job)
			var got []string
			for _, m := range e.q.sentTo(deliveryURL) {
				d, err := message.Decode(m.Body)
				require.NoError(t, err)
				got = append(got, d.DeliveryID)
			}
			require.Equal(t, c.want, got)
			j := e.st.job(job)
			require.Equal(t, domain.StatusCompleted, j.Status)
			require.Equal(t, len(c.want), j.Matched)
			require.Equal(t, len(c.want), j.Replayed)
			require.Empty(t, j.Skipped)
			for _, id := range []string{"f1", "f2", "f3", "f4", "f5"} {
				d, indexed := e.st.get(id)
				if slices.Contains(c.want, id) {
					require.Equal(t, domain.StatePending, d.State)
					require.Equal(t, job, d.ReplayedBy)
				} else {
					require.Equal(t, domain.StateDead, d.State)
					require.True(t, indexed)
				}
			}
			p1, _ := e.st.get("p1")
			require.Equal(t, domain.StatePending, p1.State)
			o1, _ := e.st.get("o1")
			require.Equal(t, domain.StateDead, o1.State, "another tenant's dead delivery is untouched")
			require.Nil(t, o1.ReplayedAt)
		})
	}
}

func TestReplayByFilterPaging(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.w.StepSends, e.w.Rate = 3, 1
	var want []string
	for i := range 10 {
		id := fmt.Sprintf("dl_%02d", i)
		ep := "ep_1"
		if i%4 == 3 {
			ep = "ep_2" // not matching: 03, 07
		} else {
			want = append(want, id)
		}
		e.dead(id, tenantA, ep, "order.created", e.t0.Add(-time.Hour+time.Duration(i)*time.Minute))
	}
	require.Len(t, want, 8)
	job := e.start(t, domain.Job{JobID: "rj_page", TenantID: tenantA, Kind: domain.KindFilter, Args: &replay.Filter{Filter: domain.DeadFilter{EndpointID: "ep_1"}}})

	cursors := map[string]bool{}
	for step, wantSent := range []int{3, 6} {
		require.NoError(t, e.w.Step(context.Background(), job))
		j := e.st.job(job)
		require.Equal(t, domain.StatusRunning, j.Status)
		require.Nil(t, j.Pending, "nothing pending between steps")
		require.NotEmpty(t, j.Cursor)
		require.False(t, cursors[j.Cursor], "the cursor advances")
		cursors[j.Cursor] = true
		require.Equal(t, step+1, j.Steps)
		require.Equal(t, wantSent, j.Replayed)
		require.Len(t, e.q.sentTo(deliveryURL), wantSent)
		msgs := e.q.sentTo(jobsURL)
		last := msgs[len(msgs)-1]
		require.Equal(t, `{"kind":"step","job_id":"rj_page"}`, last.Body, "a continuation is enqueued")
		require.Equal(t, int32(3), last.Delay, "it starts when this step's 3 sends at 1/s are due")
		e.clk.Advance(time.Duration(last.Delay) * time.Second)
	}
	require.NoError(t, e.w.Step(context.Background(), job))
	j := e.st.job(job)
	require.Equal(t, domain.StatusCompleted, j.Status, "the last page completes the job")
	require.Equal(t, 3, j.Steps)
	require.Equal(t, 8, j.Matched)
	require.Equal(t, 8, j.Replayed)
	var got []string
	for _, m := range e.q.sentTo(deliveryURL) {
		d, _ := message.Decode(m.Body)
		got = append(got, d.DeliveryID)
	}
	require.Equal(t, want, got, "each once, oldest death first")
	require.Equal(t, jobs.Message{Kind: jobs.KindSweep, TenantID: tenantA}, e.jobMessages(t)[len(e.jobMessages(t))-1])

	t.Run("step calls by page fill", func(t *testing.T) {
		for _, c := range []struct{ matching, perStep, calls int }{
			// The store ends a listing whose last page is full when no
			// shard has more (no cursor): 3 matching take one step, not a
			// second that finds nothing.
			{0, 3, 1}, {2, 3, 1}, {3, 3, 1}, {6, 3, 2}, {7, 3, 3},
		} {
			t.Run(fmt.Sprintf("%d matching, %d a step", c.matching, c.perStep), func(t *testing.T) {
				e := newEnv(t)
				e.w.StepSends = c.perStep
				ids := e.deadN("dl_", c.matching)
				job := e.start(t, domain.Job{JobID: "rj_n", TenantID: tenantA, Kind: domain.KindFilter, Args: &replay.Filter{}})
				require.Equal(t, c.calls, e.run(t, e.w, job))
				sent := e.q.replayed()
				require.Len(t, sent, c.matching)
				for _, id := range ids {
					require.Equal(t, 1, sent[id])
				}
				require.Equal(t, c.matching, e.st.job(job).Matched)
			})
		}
	})
}

func TestReplayPacing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		rand func() float64
		r    float64 // the jitter drawn
	}{
		{"no jitter", nil, 0},
		{"jitter 0.5", func() float64 { return 0.5 }, 0.5},
		{"jitter 0.99", func() float64 { return 0.99 }, 0.99},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.w.Rate, e.w.StepSends, e.w.Rand = 5, 20, c.rand
			ids := e.deadN("dl_", 25)
			job := e.start(t, domain.Job{JobID: "rj_pace", TenantID: tenantA, Kind: domain.KindIDs, Args: &replay.IDs{IDs: ids}})
			require.NoError(t, e.w.Step(context.Background(), job))
			sends := e.q.sentTo(deliveryURL)
			require.Len(t, sends, 20)
			var delays []int32
			for n, m := range sends {
				due := float64(n) / 5 // n-th send of the step at 5/s
				require.GreaterOrEqual(t, float64(m.Delay), due-1+c.r, "send %d", n)
				require.LessOrEqual(t, float64(m.Delay), due+c.r, "send %d", n)
				require.Less(t, float64(m.Delay)-due, 1.0, "jitter stays below a second")
				delays = append(delays, m.Delay)
			}
			require.True(t, slices.IsSorted(delays), "delays never decrease: %v", delays)
			require.Equal(t, int32(c.r), delays[0])
			require.Equal(t, int32(3.8+c.r), delays[19], "spread over ~4 s")
			require.LessOrEqual(t, delays[19], int32(4))

			cont := e.q.sentTo(jobsURL)[1]
			require.Equal(t, `{"kind":"step","job_id":"rj_pace"}`, cont.Body)
			require.Equal(t, int32(4), cont.Delay, "the next step starts when this one's sends are due: 20 at 5/s")
			require.GreaterOrEqual(t, cont.Delay, delays[19])

			e.clk.Advance(time.Duration(cont.Delay) * time.Second)
			require.NoError(t, e.w.Step(context.Background(), job))
			all := e.q.sentTo(deliveryURL)
			require.Len(t, all, 25)
			var due []time.Time
			for _, m := range all {
				due = append(due, m.At.Add(time.Duration(m.Delay)*time.Second))
			}
			require.True(t, slices.IsSortedFunc(due, func(a, b time.Time) int { return a.Compare(b) }), "the second step's sends come due after the first's")
			require.Equal(t, domain.StatusCompleted, e.st.job(job).Status)
		})
	}
}

// A step whose work is slower than its rate sends as fast as its work
// goes: each send is due its place over the rate after the step began, not
// after it was sent, and the next step starts when the last is due, not a
// span after the step's end (a replay at 200/s ran at 62 a second on the
// local cloud, its claims' time and its pacing added up: issue 37).
func TestReplayPacingCountsTheStepsOwnTime(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.w.Rate, e.w.StepSends = 5, 20
	ids := e.deadN("dl_", 25)
	// Each claim takes a tenth of a second: ten at once, a second a chunk
	// of ten, where the rate wants two.
	e.st.beforeClaim = func(string, string) { e.clk.Advance(100 * time.Millisecond) }
	job := e.start(t, domain.Job{JobID: "rj_slow", TenantID: tenantA, Kind: domain.KindIDs, Args: &replay.IDs{IDs: ids}})
	begin := e.clk.Now()
	require.NoError(t, e.w.Step(context.Background(), job))
	sends := e.q.sentTo(deliveryURL)
	require.Len(t, sends, 20)
	for n, m := range sends {
		due := begin.Add(time.Duration(n) * time.Second / 5)
		at := m.At.Add(time.Duration(m.Delay) * time.Second)
		if m.At.Before(due) {
			require.False(t, at.After(due), "send %d due at +%s, paced from the step's start (+%s)", n, at.Sub(begin), due.Sub(begin))
		} else {
			require.Zero(t, m.Delay, "send %d, sent at +%s, after it was due (+%s), is not delayed", n, m.At.Sub(begin), due.Sub(begin))
		}
	}
	require.Zero(t, sends[9].Delay, "the first chunk's sends, sent 2 s in, were due by then")
	cont := e.q.sentTo(jobsURL)[1]
	require.Equal(t, `{"kind":"step","job_id":"rj_slow"}`, cont.Body)
	require.Equal(t, int32(2), cont.Delay, "20 at 5/s are due 4 s after the step began; its work took 2")
}

// requireOnce checks that ids were sent exactly once in all, between jobs,
// and that the jobs' counts add up.
func requireOnce(t *testing.T, e *env, ids []string, jobs ...string) {
	t.Helper()
	sent := e.q.replayed()
	require.Len(t, sent, len(ids))
	for _, id := range ids {
		require.Equal(t, 1, sent[id], "delivery %s", id)
	}
	replayed := 0
	for _, job := range jobs {
		j := e.st.job(job)
		require.Equal(t, domain.StatusCompleted, j.Status)
		require.Equal(t, j.Matched, j.Replayed+j.Skipped["not_dead"]+j.Skipped["replay_in_progress"], "job %s: %+v", job, j.Skipped)
		replayed += j.Replayed
	}
	require.Equal(t, len(ids), replayed)
	e.requireNoLoss(t, ids)
}

func TestReplayConcurrentJobs(t *testing.T) {
	t.Parallel()
	t.Run("steps interleaved", func(t *testing.T) {
		e := newEnv(t)
		e.w.StepSends = 4
		ids := e.deadN("dl_", 12)
		reversed := slices.Clone(ids)
		slices.Reverse(reversed)
		a := e.start(t, domain.Job{JobID: "rj_a", TenantID: tenantA, Kind: domain.KindIDs, Args: &replay.IDs{IDs: ids}})
		b := e.start(t, domain.Job{JobID: "rj_b", TenantID: tenantA, Kind: domain.KindIDs, Args: &replay.IDs{IDs: reversed}})
		for range 10 {
			for _, job := range []string{a, b} {
				require.NoError(t, e.w.Step(context.Background(), job))
			}
		}
		requireOnce(t, e, ids, a, b)
	})

	t.Run("a job runs whole between another's claims", func(t *testing.T) {
		e := newEnv(t)
		e.w.StepSends = 5
		ids := e.deadN("dl_", 12)
		a := e.start(t, domain.Job{JobID: "rj_a", TenantID: tenantA, Kind: domain.KindIDs, Args: &replay.IDs{IDs: ids}})
		b := e.start(t, domain.Job{JobID: "rj_b", TenantID: tenantA, Kind: domain.KindFilter, Args: &replay.Filter{}})
		var once sync.Once
		var claims atomic.Int32
		e.st.beforeClaim = func(_, job string) {
			if job == a {
				if claims.Add(1) == 3 {
					// a is claiming its first five at once (none sent: its
					// batch is not full); b sees those it claimed pending,
					// and claims the rest first.
					once.Do(func() { e.run(t, e.w, b) })
				}
			}
		}
		e.run(t, e.w, a)
		requireOnce(t, e, ids, a, b)
		require.Equal(t, 12, e.st.job(a).Replayed+e.st.job(b).Replayed, "each once, by one of them")
		require.GreaterOrEqual(t, e.st.job(b).Replayed, 7, "b took all but a's first claims")
	})

	t.Run("goroutines", func(t *testing.T) {
		for round := range 10 {
			e := newEnv(t)
			e.w.StepSends, e.w.MaxOpenJobs = 7, 4
			ids := e.deadN("dl_", 40)
			e.st.beforeClaim = func(string, string) { runtime.Gosched() }
			var jobs []string
			for k := range 4 {
				order := slices.Clone(ids)
				if k%2 == 1 {
					slices.Reverse(order)
				}
				jobs = append(jobs, e.start(t, domain.Job{JobID: fmt.Sprintf("rj_%d_%d", round, k), TenantID: tenantA, Kind: domain.KindIDs, Args: &replay.IDs{IDs: order}}))
			}
			var wg sync.WaitGroup
			errs := make(chan error, len(jobs))
			for _, job := range jobs {
				wg.Go(func() {
					for range 100 {
						if err := e.w.Step(context.Background(), job); err != nil {
							errs <- err
							return
						}
						if e.st.job(job).Status == domain.StatusCompleted {
							return
						}
					}
					errs <- fmt.Errorf("job %s did not complete", job)
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			requireOnce(t, e, ids, jobs...)
		}
	})
}

func TestReplayCrashAndResume(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		kind        domain.JobKind
		storeFaults []fault
		queueFaults []fault
		failEntry   func(call int, body string) bool
		exactlyOnce bool
	}{
		{name: "checkpoint save fails", storeFaults: []fault{{method: "SaveJob", call: 1}}, exactlyOnce: true},
		{name: "checkpoint saved, its response lost", storeFaults: []fault{{method: "SaveJob", call: 1, after: true}}, exactlyOnce: true},
		{name: "stop after the checkpoint, before any claim", storeFaults: []fault{{method: "ClaimForReplay", call: 1}}, exactlyOnce: true},
		{name: "claim fails midway", storeFaults: []fault{{method: "ClaimForReplay", call: 12}}, exactlyOnce: true},
		{name: "the batch read fails", storeFaults: []fault{{method: "Load", call: 1}}, exactlyOnce: true},
		{name: "filter: the batch read fails", kind: domain.KindFilter, storeFaults: []fault{{method: "Load", call: 1}}, exactlyOnce: true},
		{name: "claimed, the claim's response lost", storeFaults: []fault{{method: "ClaimForReplay", call: 5, after: true}}, exactlyOnce: true},
		{name: "second send batch fails", queueFaults: []fault{{method: "SendMessageBatch", call: 2}}, exactlyOnce: true},
		{name: "first send batch sent, its response lost", queueFaults: []fault{{method: "SendMessageBatch", call: 1, after: true}}},
		{name: "a batch entry fails", failEntry: func(call int, b string) bool {
			m, err := message.Decode(b)
			return call == 1 && err == nil && m.DeliveryID == "dl_004"
		}},
		{name: "release fails", storeFaults: []fault{{method: "ReleaseReplay", call: 3}}},
		{name: "release lost", storeFaults: []fault{{method: "ReleaseReplay", call: 3, after: true}}},
		{name: "completion save fails", storeFaults: []fault{{method: "SaveJob", call: 2}}, exactlyOnce: true},
		{name: "filter: second send batch fails", kind: domain.KindFilter, queueFaults: []fault{{method: "SendMessageBatch", call: 2}}, exactlyOnce: true},
		{name: "filter: release fails", kind: domain.KindFilter, storeFaults: []fault{{method: "ReleaseReplay", call: 12}}},
		{name: "filter: completion save fails", kind: domain.KindFilter, storeFaults: []fault{{method: "SaveJob", call: 2}}, exactlyOnce: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			ids := e.deadN("dl_", 15)
			e.dead("dl_off", tenantA, "ep_off", "order.created", e.t0.Add(-time.Minute))
			all := append(slices.Clone(ids), "dl_off")
			j := domain.Job{JobID: "rj_crash", TenantID: tenantA, Kind: domain.KindIDs, Args: &replay.IDs{IDs: all}}
			if c.kind == domain.KindFilter {
				j = domain.Job{JobID: "rj_crash", TenantID: tenantA, Kind: domain.KindFilter, Args: &replay.Filter{}}
			}
			job := e.start(t, j)
			e.st.fail(c.storeFaults...)
			e.q.fail(c.queueFaults...)
			e.q.failEntry = c.failEntry

			require.Error(t, e.w.Step(context.Background(), job), "the step stops")
			require.NotEqual(t, domain.StatusCompleted, e.st.job(job).Status)
			e.clk.Advance(30 * time.Minute) // SQS redelivers the job message
			require.NoError(t, e.w.Step(context.Background(), job), "the redelivered step resumes")

			got := e.st.job(job)
			require.Equal(t, domain.StatusCompleted, got.Status, "the resumed step finishes the job")
			require.Nil(t, got.Pending)
			require.Equal(t, 16, got.Matched, "each delivery counted once")
			require.Equal(t, 15, got.Replayed)
			require.Equal(t, map[string]int{"endpoint_disabled": 1}, got.Skipped)
			require.Equal(t, 1, got.Steps)

			sent := e.q.replayed()
			for _, id := range ids {
				require.GreaterOrEqual(t, sent[id], 1, "delivery %s is never lost", id)
				if c.exactlyOnce {
					require.Equal(t, 1, sent[id], "delivery %s", id)
				}
				d, _ := e.st.get(id)
				require.Equal(t, domain.StatePending, d.State)
				require.Equal(t, job, d.ReplayedBy)
			}
			require.Zero(t, sent["dl_off"])
			e.requireNoLoss(t, all)
			require.Equal(t, jobs.Message{Kind: jobs.KindSweep, TenantID: tenantA}, e.jobMessages(t)[len(e.jobMessages(t))-1])
		})
	}

	t.Run("stopped for good between claim and send: pending, claimed, not yet sent", func(t *testing.T) {
		// What the resume has to fix: the state a stop leaves.
		e := newEnv(t)
		ids := e.deadN("dl_", 3)
		job := e.start(t, domain.Job{JobID: "rj_stop", TenantID: tenantA, Kind: domain.KindIDs, Args: &replay.IDs{IDs: ids}})
		e.q.fail(fault{method: "SendMessageBatch", call: 1})
		require.Error(t, e.w.Step(context.Background(), job))
		require.Empty(t, e.q.replayed())
		j := e.st.job(job)
		require.Equal(t, ids, j.Pending, "the checkpoint names the step's deliveries")
		for _, id := range ids {
			d, indexed := e.st.get(id)
			require.Equal(t, job, d.ReplayClaimedBy)
			require.False(t, indexed)
		}
		e.clk.Advance(30 * time.Minute)
		require.NoError(t, e.w.Step(context.Background(), job))
		requireOnce(t, e, ids, job)
	})
}

// redriveEnv holds a DLQ with one message of each kind a redrive meets.
type redriveCase struct {
	name   string
	msg    string // DLQ message id
	id     string // delivery id, if any
	sent   bool   // sent back to the delivery queue
	left   bool   // left in the DLQ
	reason string // skip reason, if skipped
}

func TestRedrive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	t0 := e.t0
	old := t0.Add(-time.Hour)
	var rows []redriveCase
	add := func(name, id string, sent, left bool, reason string, setup func()) {
		if setup != nil {
			setup()
		}
		b := "not json {"
		if id != "" {
			b = body(id, tenantA, "ep_1", "order.created")
		}
		rows = append(rows, redriveCase{name: name, msg: e.q.addDLQ(b, old), id: id, sent: sent, left: left, reason: reason})
	}
	add("dead", "r1", true, false, "", func() { e.dead("r1", tenantA, "ep_1", "order.created", old) })
	add("dead, replayed before the message was sent", "r2", true, false, "", func() {
		d := e.dead("r2", tenantA, "ep_1", "order.created", old)
		d.ReplayedAt, d.ReplayedBy = timePtr(old.Add(-time.Hour)), "rj_old"
		e.st.put(d)
	})
	add("delivered since", "s1", false, false, "stale_copy", func() {
		e.st.put(domain.Delivery{DeliveryID: "s1", TenantID: tenantA, EndpointID: "ep_1", State: domain.StateDelivered, DeliveredAt: timePtr(old.Add(time.Minute))})
	})
	add("replayed since", "s2", false, false, "stale_copy", func() {
		e.st.put(domain.Delivery{DeliveryID: "s2", TenantID: tenantA, EndpointID: "ep_1", State: domain.StatePending,
			ReplayedAt: timePtr(old.Add(time.Minute)), ReplayedBy: "rj_old"})
	})
	add("pending, its death not recorded", "p1", true, false, "", func() {
		e.st.put(domain.Delivery{DeliveryID: "p1", TenantID: tenantA, EndpointID: "ep_1", State: domain.StatePending})
	})
	add("no record", "u1", true, false, "", nil)
	add("dead, claimed by a running replay", "c1", false, false, "replay_in_progress", func() {
		d := e.dead("c1", tenantA, "ep_1", "order.created", old)
		d.ReplayClaimedBy, d.ReplayClaimedAt = "rj_tenant", timePtr(t0.Add(-time.Minute))
		e.st.put(d)
	})
	add("malformed", "", false, true, "malformed_message", nil)

	job := e.start(t, domain.Job{JobID: "rj_redrive", Kind: domain.KindRedrive, Args: &dlq.RedriveArgs{}})
	e.clk.Advance(time.Second)
	e.dead("l1", tenantA, "ep_1", "order.created", e.clk.Now())
	later := e.q.addDLQ(body("l1", tenantA, "ep_1", "order.created"), e.clk.Now())
	bodies := map[string]string{}
	for _, r := range rows {
		m, _ := e.q.dlqState(r.msg)
		bodies[r.msg] = m.Body
	}

	require.Equal(t, 1, e.run(t, e.w, job))
	sent := e.q.replayed()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			m, there := e.q.dlqState(r.msg)
			require.Equal(t, r.left, there)
			j := e.st.job(job)
			if r.sent {
				require.Equal(t, 1, sent[r.id])
				require.True(t, slices.ContainsFunc(e.q.sentTo(deliveryURL), func(s sentMsg) bool { return sameButReplayed(t, s.Body, bodies[r.msg]) }),
					"the DLQ body is sent unchanged but for its replay time")
				d, indexed := e.st.get(r.id)
				require.False(t, indexed)
				require.Empty(t, d.ReplayClaimedBy, "no claim left")
				if r.id == "r1" || r.id == "r2" {
					require.Equal(t, domain.StatePending, d.State)
					require.Equal(t, job, d.ReplayedBy, "claimed and released")
					require.Equal(t, e.clk.Now(), *d.ReplayedAt)
				}
				return
			}
			if r.id != "" {
				require.Zero(t, sent[r.id])
				require.Equal(t, r.reason, j.SkippedIDs[r.id])
			} else {
				require.Equal(t, r.reason, j.SkippedIDs[r.msg])
				require.Equal(t, 1, m.Receives)
			}
		})
	}
	t.Run("message sent after the job began", func(t *testing.T) {
		m, there := e.q.dlqState(later)
		require.True(t, there, "left in the DLQ")
		require.False(t, m.VisibleAt.After(e.clk.Now()), "and visible again")
		require.Contains(t, e.q.visibility, visChange{MessageID: later, Timeout: 0})
		require.Zero(t, sent["l1"])
		d, indexed := e.st.get("l1")
		require.Equal(t, domain.StateDead, d.State)
		require.True(t, indexed)
	})
	t.Run("job", func(t *testing.T) {
		j := e.st.job(job)
		require.Equal(t, domain.StatusCompleted, j.Status)
		require.Equal(t, len(rows), j.Matched)
		require.Equal(t, 4, j.Replayed)
		require.Equal(t, 1, j.Failed)
		require.Equal(t, map[string]int{"stale_copy": 2, "replay_in_progress": 1, "malformed_message": 1}, j.Skipped)
		require.Equal(t, []jobs.Message{jobs.Step(job), {Kind: jobs.KindSweep}, {Kind: jobs.KindSweep}}, e.jobMessages(t))
		for _, m := range e.q.sentTo(deliveryURL) {
			require.False(t, m.Batch)
		}
	})
}

func TestRedriveInSteps(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.w.StepSends, e.w.Rate = 2, 1
	e.q.perReceive = 2
	old := e.t0.Add(-time.Hour)
	ids := e.deadInDLQ("r%d", 5, old)
	job := e.start(t, domain.Job{JobID: "rj_redrive", Kind: domain.KindRedrive, Args: &dlq.RedriveArgs{}})
	e.clk.Advance(time.Second)
	e.dead("late", tenantA, "ep_1", "order.created", e.clk.Now())
	late := e.q.addDLQ(body("late", tenantA, "ep_1", "order.created"), e.clk.Now())

	steps := 0
	var byStep [][]int32 // each step's delays, sorted: its sends land in any order
	for e.st.job(job).Status != domain.StatusCompleted {
		before := len(e.q.sentTo(deliveryURL))
		require.NoError(t, e.w.Step(context.Background(), job))
		steps++
		var delays []int32
		for _, s := range e.q.sentTo(deliveryURL)[before:] {
			delays = append(delays, s.Delay)
		}
		slices.Sort(delays)
		byStep = append(byStep, delays)
		require.LessOrEqual(t, steps, 10)
		msgs := e.q.sentTo(opsURL)
		if last := msgs[len(msgs)-1]; last.Body == `{"job_id":"rj_redrive"}` {
			require.Equal(t, int32(2), last.Delay, "the next step waits for this one's 2 sends at 1/s")
			e.clk.Advance(time.Duration(last.Delay) * time.Second)
		}
	}
	require.Equal(t, 3, steps)
	requireOnce(t, e, ids, job)
	m, there := e.q.dlqState(late)
	require.True(t, there)
	require.False(t, m.VisibleAt.After(e.clk.Now()))
	require.Len(t, e.q.dlq, 1, "the job completes when the DLQ has nothing older")
	require.Equal(t, [][]int32{{0, 1}, {0, 1}, {0}}, byStep, "paced at 1/s within each step")
}

func TestRedriveAndTenantReplay(t *testing.T) {
	t.Parallel()
	for _, first := range []string{"tenant replay", "redrive"} {
		t.Run(first+" first", func(t *testing.T) {
			e := newEnv(t)
			ids := e.deadN("dl_", 6)
			for _, id := range ids {
				e.q.addDLQ(body(id, tenantA, "ep_1", "order.created"), e.t0.Add(-time.Hour))
			}
			tenant := e.start(t, domain.Job{JobID: "rj_t", TenantID: tenantA, Kind: domain.KindFilter, Args: &replay.Filter{}})
			redrive := e.start(t, domain.Job{JobID: "rj_r", Kind: domain.KindRedrive, Args: &dlq.RedriveArgs{}})
			e.clk.Advance(time.Second)
			jobs := []string{tenant, redrive}
			if first == "redrive" {
				slices.Reverse(jobs)
			}
			for _, job := range jobs {
				e.run(t, e.w, job)
			}
			sent := e.q.replayed()
			for _, id := range ids {
				require.Equal(t, 1, sent[id], "delivery %s", id)
			}
			require.Empty(t, e.q.dlq, "the redrive deletes every copy")
			e.requireNoLoss(t, ids)
		})
	}
}

func TestRedriveCrashAndResume(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		storeFaults []fault
		queueFaults []fault
		sweep       bool // a sweep runs before the job resumes
		exactlyOnce bool
	}{
		{name: "send fails after the claim", queueFaults: []fault{{method: "SendMessage", call: 3}}, exactlyOnce: true},
		{name: "send fails after the claim, a sweep runs meanwhile", queueFaults: []fault{{method: "SendMessage", call: 3}}, sweep: true, exactlyOnce: true},
		{name: "claimed, the claim's response lost", storeFaults: []fault{{method: "ClaimForReplay", call: 2, after: true}}, exactlyOnce: true},
		{name: "release fails after the send", storeFaults: []fault{{method: "ReleaseReplay", call: 2}}},
		{name: "release fails after the send, a sweep runs meanwhile", storeFaults: []fault{{method: "ReleaseReplay", call: 2}}, sweep: true},
		{name: "delete fails after the release", queueFaults: []fault{{method: "DeleteMessage", call: 2}}, exactlyOnce: true},
		{name: "progress save fails", storeFaults: []fault{{method: "SaveJob", call: 3}}, exactlyOnce: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			old := e.t0.Add(-time.Hour)
			ids := e.deadInDLQ("r%d", 4, old)
			job := e.start(t, domain.Job{JobID: "rj_redrive", Kind: domain.KindRedrive, Args: &dlq.RedriveArgs{}})
			e.clk.Advance(time.Second)
			e.st.fail(c.storeFaults...)
			e.q.fail(c.queueFaults...)

			require.Error(t, e.w.Step(context.Background(), job))
			if c.sweep {
				e.clk.Advance(11 * time.Minute) // the redrive's hold on its messages lapses
				_, _, err := e.w.Sweep(context.Background())
				require.NoError(t, err)
			}
			e.clk.Advance(30 * time.Minute) // SQS redelivers the job message
			e.run(t, e.w, job)

			sent := e.q.replayed()
			for _, id := range ids {
				require.GreaterOrEqual(t, sent[id], 1, "delivery %s is never lost", id)
				if c.exactlyOnce {
					require.Equal(t, 1, sent[id], "delivery %s", id)
				}
				d, _ := e.st.get(id)
				require.Equal(t, domain.StatePending, d.State)
				require.Empty(t, d.ReplayClaimedBy, "delivery %s is left claimed", id)
				require.Equal(t, job, d.ReplayedBy)
			}
			require.Empty(t, e.q.dlq)
			require.Equal(t, domain.StatusCompleted, e.st.job(job).Status)
		})
	}
}

func TestSweep(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sentAt := e.t0.Add(-time.Hour)
	rows := []struct {
		name  string
		id    string
		setup func(id string)
		stale bool
	}{
		{"delivered", "s1", func(id string) {
			e.st.put(domain.Delivery{DeliveryID: id, TenantID: tenantA, State: domain.StateDelivered, DeliveredAt: timePtr(sentAt.Add(time.Minute))})
		}, true},
		{"replayed after the message was sent", "s2", func(id string) {
			e.st.put(domain.Delivery{DeliveryID: id, TenantID: tenantA, State: domain.StatePending, ReplayedAt: timePtr(sentAt.Add(time.Minute)), ReplayedBy: "rj_1"})
		}, true},
		{"replayed, died again, still dead", "s3", func(id string) {
			d := e.dead(id, tenantA, "ep_1", "order.created", sentAt.Add(2*time.Minute))
			d.ReplayedAt, d.ReplayedBy = timePtr(sentAt.Add(time.Minute)), "rj_1"
			e.st.put(d)
		}, true},
		{"replayed before the message was sent", "k1", func(id string) {
			d := e.dead(id, tenantA, "ep_1", "order.created", sentAt)
			d.ReplayedAt, d.ReplayedBy = timePtr(sentAt.Add(-time.Minute)), "rj_1"
			e.st.put(d)
		}, false},
		{"dead, never replayed", "k2", func(id string) { e.dead(id, tenantA, "ep_1", "order.created", sentAt) }, false},
		{"claimed, not yet sent", "k3", func(id string) {
			e.st.put(domain.Delivery{DeliveryID: id, TenantID: tenantA, State: domain.StatePending, ReplayClaimedBy: "rj_2",
				ReplayClaimedAt: timePtr(sentAt.Add(time.Minute)), ReplayedAt: timePtr(sentAt.Add(time.Minute))})
		}, false},
		{"no record", "k4", func(string) {}, false},
		{"malformed", "", func(string) {}, false},
	}
	msgs := map[string]string{}
	for _, r := range rows {
		r.setup(r.id)
		b := "{malformed"
		if r.id != "" {
			b = body(r.id, tenantA, "ep_1", "order.created")
		}
		msgs[r.name] = e.q.addDLQ(b, sentAt)
	}
	deleted, kept, err := e.w.Sweep(context.Background())
	require.NoError(t, err)
	require.Equal(t, 3, deleted)
	require.Equal(t, 5, kept)
	require.Empty(t, e.q.sentTo(deliveryURL), "a sweep sends nothing")
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			m, there := e.q.dlqState(msgs[r.name])
			require.Equal(t, !r.stale, there)
			if there {
				require.Equal(t, 1, m.Receives, "looked at once")
				require.False(t, m.VisibleAt.After(e.clk.Now().Add(2*time.Second)), "hidden two seconds at most")
			}
		})
	}
	t.Run("nothing left to delete", func(t *testing.T) {
		e.clk.Advance(3 * time.Second) // the kept messages are visible again
		deleted, kept, err := e.w.Sweep(context.Background())
		require.NoError(t, err)
		require.Zero(t, deleted)
		require.Equal(t, 5, kept)
	})
}

func TestHandle(t *testing.T) {
	t.Parallel()
	record := func(id, body string) events.SQSMessage { return events.SQSMessage{MessageId: id, Body: body} }
	cases := []struct {
		name    string
		setup   func(t *testing.T, e *env)
		records []events.SQSMessage
		failed  []string
		check   func(t *testing.T, e *env)
	}{
		{name: "empty batch", records: nil, failed: []string{}},
		{name: "malformed job message is dropped", records: []events.SQSMessage{record("m1", "{not json")}, failed: []string{},
			check: func(t *testing.T, e *env) { require.Empty(t, e.q.sends) }},
		{name: "unknown job is dropped", records: []events.SQSMessage{record("m1", `{"job_id":"rj_gone"}`)}, failed: []string{}},
		{name: "job step runs", records: []events.SQSMessage{record("m1", `{"job_id":"rj_1"}`)}, failed: []string{},
			setup: func(t *testing.T, e *env) {
				e.dead("dl_1", tenantA, "ep_1", "order.created", e.t0.Add(-time.Hour))
				require.NoError(t, e.w.Start(context.Background(), &domain.Job{JobID: "rj_1", TenantID: tenantA, Kind: domain.KindIDs, Args: &replay.IDs{IDs: []string{"dl_1"}}}))
			},
			check: func(t *testing.T, e *env) {
				require.Equal(t, map[string]int{"dl_1": 1}, e.q.replayed())
				require.Equal(t, domain.StatusCompleted, e.st.job("rj_1").Status)
			}},
		{name: "failing step is a batch item failure", records: []events.SQSMessage{record("m1", `{"job_id":"rj_1"}`)}, failed: []string{"m1"},
			setup: func(t *testing.T, e *env) {
				require.NoError(t, e.w.Start(context.Background(), &domain.Job{JobID: "rj_1", TenantID: tenantA, Kind: domain.KindIDs, Args: &replay.IDs{IDs: []string{"dl_1"}}}))
				e.st.fail(fault{method: "Job", call: 1})
			}},
		{name: "unknown job kind is a failure", records: []events.SQSMessage{record("m1", `{"job_id":"rj_1"}`)}, failed: []string{"m1"},
			setup: func(t *testing.T, e *env) {
				require.NoError(t, e.st.CreateJob(context.Background(), &domain.Job{JobID: "rj_1", TenantID: tenantA, Kind: "everything"}, 3), "recorded by a later release, say")
			}},
		{name: "sweep runs", records: []events.SQSMessage{record("m1", `{"sweep":true}`)}, failed: []string{},
			setup: func(t *testing.T, e *env) {
				e.st.put(domain.Delivery{DeliveryID: "dl_1", TenantID: tenantA, State: domain.StateDelivered})
				e.q.addDLQ(body("dl_1", tenantA, "ep_1", "order.created"), e.t0.Add(-time.Hour))
			},
			check: func(t *testing.T, e *env) { require.Empty(t, e.q.dlq) }},
		{name: "failing sweep is a batch item failure", records: []events.SQSMessage{record("m1", `{"sweep":true}`)}, failed: []string{"m1"},
			setup: func(t *testing.T, e *env) { e.q.fail(fault{method: "ReceiveMessage", call: 1}) }},
		{name: "only the failing records of a batch", failed: []string{"m3"},
			records: []events.SQSMessage{record("m1", `{"job_id":"rj_1"}`), record("m2", "]["), record("m3", `{"job_id":"rj_2"}`), record("m4", `{"sweep":true}`)},
			setup: func(t *testing.T, e *env) {
				require.NoError(t, e.w.Start(context.Background(), &domain.Job{JobID: "rj_1", TenantID: tenantA, Kind: domain.KindIDs, Args: &replay.IDs{IDs: []string{"dl_x"}}}))
				require.NoError(t, e.st.CreateJob(context.Background(), &domain.Job{JobID: "rj_2", TenantID: tenantA, Kind: "bogus"}, 3))
			},
			check: func(t *testing.T, e *env) { require.Equal(t, domain.StatusCompleted, e.st.job("rj_1").Status) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			if c.setup != nil {
				c.setup(t, e)
			}
			resp, err := e.w.Handle(context.Background(), events.SQSEvent{Records: c.records})
			require.NoError(t, err)
			require.NotNil(t, resp.BatchItemFailures, "the response slice is never nil")
			var failed []string
			for _, f := range resp.BatchItemFailures {
				failed = append(failed, f.ItemIdentifier)
			}
			require.Equal(t, c.failed, append([]string{}, failed...))
			if c.check != nil {
				c.check(t, e)
			}
		})
	}
}

func TestHandleRedeliveryResumes(t *testing.T) {
	t.Parallel()
	// The job message comes back after a failed step, as SQS redelivers it.
	e := newEnv(t)
	ids := e.deadN("dl_", 12)
	job := e.start(t, domain.Job{JobID: "rj_h", TenantID: tenantA, Kind: domain.KindIDs, Args: &replay.IDs{IDs: ids}})
	e.q.fail(fault{method: "SendMessageBatch", call: 2})
	msg := events.SQSMessage{MessageId: "m1", Body: e.q.sentTo(jobsURL)[0].Body}
	resp, err := e.w.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	require.NoError(t, err)
	require.Equal(t, []events.SQSBatchItemFailure{{ItemIdentifier: "m1"}}, resp.BatchItemFailures)
	e.clk.Advance(30 * time.Minute)
	resp, err = e.w.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	requireOnce(t, e, ids, job)
}

type depthsFunc func(context.Context) (map[string]int, error)

// counted is a Store whose DLQ depth counters are depths' and whose
// reconciliation is rec's (nil: the store's).
type counted struct {
	background.Store
	depths depthsFunc
	rec    dlq.Reconciler
}

func (s counted) DLQDepths(ctx context.Context) (map[string]int, error) { return s.depths(ctx) }

func (s counted) ReconcileDLQDepth(ctx context.Context, tenantID string) (store.DepthCheck, error) {
	if s.rec != nil {
		return s.rec.ReconcileDLQDepth(ctx, tenantID)
	}
	return s.Store.ReconcileDLQDepth(ctx, tenantID)
}

func TestPublishDepthsEmitsGauges(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := &background.Worker{Metrics: metrics.New(&buf), Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Store: counted{depths: func(context.Context) (map[string]int, error) { return map[string]int{"a": 3, "b": 0}, nil }}}
	resp, err := w.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m", Body: `{"gauges":true}`}}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	got := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		if v, ok := m[metrics.MaxTenantDLQ].(float64); ok {
			got["(max)"] = v
			continue
		}
		got[m[metrics.DimensionTenant].(string)] = m[metrics.TenantDLQDepth].(float64)
	}
	require.Equal(t, map[string]float64{"a": 3, "b": 0, "(max)": 3}, got, "every tenant, zero included, and the deepest")

	buf.Reset()
	require.NoError(t, w.PublishDepths(context.Background(), "a"))
	require.Equal(t, 1, strings.Count(buf.String(), "\n"), "one tenant only")
}

// A delivery whose last attempt was cut off before it was recorded is still
// pending while SQS has moved its message to the DLQ: the sweep records its
// death, so the tenant sees it and can replay it, and keeps the message.
func TestSweepRecordsAMissedDeath(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sentAt := e.t0.Add(-time.Hour)
	e.st.put(domain.Delivery{DeliveryID: "m1", TenantID: tenantA, EndpointID: "ep_1", State: domain.StatePending, Attempts: 3})
	e.q.addDLQ(body("m1", tenantA, "ep_1", "order.created"), sentAt)
	deleted, kept, err := e.w.Sweep(context.Background())
	require.NoError(t, err)
	require.Zero(t, deleted)
	require.Equal(t, 1, kept, "its only copy stays in the DLQ")
	d, indexed := e.st.get("m1")
	require.Equal(t, domain.StateDead, d.State)
	require.True(t, indexed, "listed in the tenant's DLQ")
	require.Equal(t, "attempts_exhausted", string(d.DeadReason))
	require.Equal(t, body("m1", tenantA, "ep_1", "order.created"), d.Message, "replayable")
	require.Equal(t, "death_not_recorded", d.AttemptLog[len(d.AttemptLog)-1].Error)
}

// A delivery none of whose attempts got as far as writing its record (each
// stopped first) has no record while SQS holds its message in the DLQ: the
// sweep writes it, dead, from the message, so the tenant sees and can replay
// it, and keeps the message.
func TestSweepRecordsADeathWithNoRecord(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.q.addDLQ(body("m2", tenantA, "ep_1", "order.created"), e.t0.Add(-time.Hour))
	deleted, kept, err := e.w.Sweep(context.Background())
	require.NoError(t, err)
	require.Zero(t, deleted)
	require.Equal(t, 1, kept, "its only copy stays in the DLQ")
	d, indexed := e.st.get("m2")
	require.True(t, indexed, "listed in the tenant's DLQ")
	require.Equal(t, domain.StateDead, d.State)
	require.Equal(t, tenantA, d.TenantID)
	require.Equal(t, "ep_1", d.EndpointID)
	require.Equal(t, body("m2", tenantA, "ep_1", "order.created"), d.Message, "replayable")
}

// sameButReplayed reports whether sent is the message orig, marked as
// replayed (its age counted from the replay).
func sameButReplayed(t *testing.T, sent, orig string) bool {
	t.Helper()
	a, err := message.Decode(sent)
	require.NoError(t, err)
	b, err := message.Decode(orig)
	require.NoError(t, err)
	if a.ReplayedAt == nil {
		return false
	}
	a.ReplayedAt = nil
	// A replay's: in the event's trace (the one derived from it when the
	// message carried none), under the replay's send span; a redrive's:
	// unchanged.
	if a.TraceParent != b.TraceParent {
		at := trace.Or(a.TraceParent, trace.Context{})
		if at.TraceID != trace.Or(b.TraceParent, trace.Derive(trace.EventKey(b.TenantID, b.EventID), b.OccurredAt)).TraceID {
			return false
		}
	}
	a.TraceParent = b.TraceParent
	return reflect.DeepEqual(a, b)
}

// SQS refuses a DelaySeconds above 900 (the fake does too): a step paced so
// slowly that its sends, or the next step, would be due later than that is
// sent at 900 s rather than refused.
func TestSlowPacingStaysWithinSQSDelayLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := e.deadN("dl_", 13)          // one more than a step sends
	e.w.StepSends, e.w.Rate = 12, 0.01 // one send every 100 s
	job := e.start(t, domain.Job{JobID: "rj_slow", TenantID: tenantA, Kind: domain.KindIDs, Args: &replay.IDs{IDs: ids}})
	require.NoError(t, e.w.Step(context.Background(), job))
	sent := e.q.sentTo(deliveryURL)
	require.Len(t, sent, 12)
	for n, m := range sent {
		require.Equal(t, int32(min(900, 100*n)), m.Delay, "send %d", n)
	}
	require.Equal(t, []jobs.Message{jobs.Step(job), jobs.Step(job)}, e.jobMessages(t), "the start, and the next step")
	require.Equal(t, int32(900), e.q.sentTo(jobsURL)[1].Delay, "the next step, due in 1201 s, is sent at the limit")
}

// The sweep reads a delivery, finds no record, and records its death from
// its DLQ message. A record made between that read and that write (a copy
// of the delivery attempted at that moment) is not overwritten: the sweep
// reads it again and acts on it as it is.
func TestSweepActsOnARecordMadeWhileItLooked(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 11, 30, 0, 0, time.UTC)
	cases := []struct {
		name      string
		meanwhile domain.Delivery
		deleted   bool
		check     func(t *testing.T, d domain.Delivery, indexed bool)
	}{
		{"delivered meanwhile: the message is a stale copy, deleted",
			domain.Delivery{DeliveryID: "m3", TenantID: tenantA, EndpointID: "ep_1", State: domain.StateDelivered, Attempts: 1, DeliveredAt: &at,
				AttemptLog: []domain.Attempt{{Number: 1, At: at, Status: 200}}},
			true, func(t *testing.T, d domain.Delivery, indexed bool) {
				require.Equal(t, domain.StateDelivered, d.State)
				require.Len(t, d.AttemptLog, 1, "nothing recorded over it")
				require.False(t, indexed)
			}},
		{"pending meanwhile: its death recorded on it, its attempt kept",
			domain.Delivery{DeliveryID: "m3", TenantID: tenantA, EndpointID: "ep_1", State: domain.StatePending, Attempts: 1,
				AttemptLog: []domain.Attempt{{Number: 1, At: at, Status: 503}}},
			false, func(t *testing.T, d domain.Delivery, indexed bool) {
				require.Equal(t, domain.StateDead, d.State)
				require.True(t, indexed)
				require.Equal(t, 2, d.Attempts)
				require.Equal(t, 503, d.AttemptLog[0].Status, "the attempt made meanwhile is kept")
				require.Equal(t, "death_not_recorded", d.AttemptLog[1].Error)
			}},
		{"dead meanwhile: left as it is",
			domain.Delivery{DeliveryID: "m3", TenantID: tenantA, EndpointID: "ep_1", State: domain.StateDead, Attempts: 2, DeadAt: &at,
				DeadReason: "rejected_400", Message: "{}", AttemptLog: []domain.Attempt{{Number: 2, At: at, Status: 400}}},
			false, func(t *testing.T, d domain.Delivery, indexed bool) {
				require.Equal(t, "rejected_400", string(d.DeadReason))
				require.Equal(t, 2, d.Attempts, "not recorded dead a second time")
				require.True(t, indexed)
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			msg := e.q.addDLQ(body("m3", tenantA, "ep_1", "order.created"), e.t0.Add(-time.Hour))
			made := false
			e.st.beforeRecord = func(string) {
				if !made {
					made = true
					e.st.put(c.meanwhile)
				}
			}
			deleted, kept, err := e.w.Sweep(context.Background())
			require.NoError(t, err)
			require.True(t, made, "the record was made between the sweep's read and its write")
			if c.deleted {
				require.Equal(t, [2]int{1, 0}, [2]int{deleted, kept})
			} else {
				require.Equal(t, [2]int{0, 1}, [2]int{deleted, kept})
			}
			_, there := e.q.dlqState(msg)
			require.Equal(t, !c.deleted, there)
			d, indexed := e.st.get("m3")
			c.check(t, d, indexed)
		})
	}
}

// reconciler is a fake store.ReconcileDLQDepth: what it finds per tenant,
// and the tenants it was asked about.
type reconciler struct {
	mu     sync.Mutex
	checks map[string]store.DepthCheck
	fail   map[string]bool
	asked  []string
}

func (r *reconciler) ReconcileDLQDepth(_ context.Context, tenant string) (store.DepthCheck, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, tenant)
	if r.fail[tenant] {
		return store.DepthCheck{TenantID: tenant}, errors.New("throttled")
	}
	c := r.checks[tenant]
	c.TenantID = tenant
	return c, nil
}

// corrections reads the DLQDepthCorrections values of EMF lines: per
// tenant, and stack-wide ("").
func corrections(t *testing.T, out string) map[string][]float64 {
	t.Helper()
	got := map[string][]float64{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		v, ok := m[metrics.DLQDepthCorrections].(float64)
		if !ok {
			continue
		}
		tenant, _ := m[metrics.DimensionTenant].(string)
		got[tenant] = append(got[tenant], v)
	}
	return got
}

// The sweep's schedule also reconciles every tenant's DLQ depth counter
// with the dead index; each correction is published (DLQDepthCorrections,
// per tenant and in total: a correction means a counter had drifted), and
// a run with none publishes 0. The sweeps that follow a replay do not
// reconcile.
func TestScheduledSweepReconcilesDepthsAndPublishesCorrections(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, e *env, body string) []string {
		t.Helper()
		resp, err := e.w.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m", Body: body}}})
		require.NoError(t, err)
		var failed []string
		for _, f := range resp.BatchItemFailures {
			failed = append(failed, f.ItemIdentifier)
		}
		return failed
	}
	setup := func(r *reconciler) (*env, *bytes.Buffer) {
		e := newEnv(t)
		var buf bytes.Buffer
		e.w.Metrics = metrics.New(&buf)
		e.w.Store = counted{Store: e.w.Store, depths: func(context.Context) (map[string]int, error) { return map[string]int{"a": 3, "b": 1, "c": 0}, nil }, rec: r}
		return e, &buf
	}
	t.Run("corrections are published", func(t *testing.T) {
		r := &reconciler{checks: map[string]store.DepthCheck{
			"a": {Counter: 3, Indexed: 2, Corrected: true},
			"b": {Counter: 1, Indexed: 1},
			"c": {Deferred: true},
		}}
		e, buf := setup(r)
		require.Empty(t, run(t, e, `{"sweep":true,"reconcile":true}`))
		require.ElementsMatch(t, []string{"a", "b", "c"}, r.asked, "every tenant with a counter")
		require.Equal(t, map[string][]float64{"a": {1}}, corrections(t, buf.String()), "one correction, of tenant a (the stack-wide figure is in the same document)")
	})
	t.Run("none: a zero, so the figure has a value each run", func(t *testing.T) {
		e, buf := setup(&reconciler{})
		require.Empty(t, run(t, e, `{"sweep":true,"reconcile":true}`))
		require.Equal(t, map[string][]float64{"": {0}}, corrections(t, buf.String()))
	})
	t.Run("a sweep after a replay does not reconcile", func(t *testing.T) {
		r := &reconciler{}
		e, buf := setup(r)
		require.Empty(t, run(t, e, `{"sweep":true}`))
		require.Empty(t, r.asked)
		require.Empty(t, corrections(t, buf.String()))
	})
	t.Run("a tenant that fails does not stop the others; the message is retried", func(t *testing.T) {
		r := &reconciler{fail: map[string]bool{"a": true}, checks: map[string]store.DepthCheck{"b": {Counter: 1, Indexed: 0, Corrected: true}}}
		e, buf := setup(r)
		require.Equal(t, []string{"m"}, run(t, e, `{"sweep":true,"reconcile":true}`))
		require.ElementsMatch(t, []string{"a", "b", "c"}, r.asked)
		require.Equal(t, map[string][]float64{"b": {1}}, corrections(t, buf.String()), "what was corrected is published")
	})
}

// The schedule's sweep (every 5 minutes) moves the arrivals, each received
// once, and passes over the whole DLQ once a day: a dead message is
// received and its record read about 14 times over the DLQ's 14 days, not
// in every pass (issue 37). A sweep after a job of a tenant reads that
// tenant's messages only, and deletes a copy its job made stale.
func TestScheduledSweepReadsTheDLQOnceADay(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sentAt := e.t0.Add(-time.Hour)
	e.st.put(domain.Delivery{DeliveryID: "dl_a", TenantID: tenantA, EndpointID: "ep_1", State: domain.StateDead})
	e.st.put(domain.Delivery{DeliveryID: "dl_b", TenantID: tenantB, EndpointID: "ep_1", State: domain.StateDead})
	a := e.q.addDLQ(body("dl_a", tenantA, "ep_1", "order.created"), sentAt)
	b := e.q.addDLQ(body("dl_b", tenantB, "ep_1", "order.created"), sentAt)
	reads := func() int {
		e.st.mu.Lock()
		defer e.st.mu.Unlock()
		return e.st.faults.calls["Delivery"]
	}
	receives := func(id string) int {
		m, there := e.q.dlqState(id)
		require.True(t, there, id)
		return m.Receives
	}
	handle := func(body string) {
		t.Helper()
		resp, err := e.w.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "s", Body: body}}})
		require.NoError(t, err)
		require.Empty(t, resp.BatchItemFailures)
	}
	// A day of the schedule: 288 passes, 5 minutes apart.
	for range 288 {
		handle(`{"sweep":true,"reconcile":true}`)
		e.clk.Advance(5 * time.Minute)
	}
	require.Equal(t, 1, receives(a), "one pass over the DLQ in a day")
	require.Equal(t, 1, receives(b))
	require.Equal(t, 2, reads())
	handle(`{"sweep":true,"reconcile":true}`)
	require.Equal(t, 2, receives(a), "the next day's")
	require.Equal(t, 4, reads())

	// Replayed and delivered since it was sent: stale. The sweep after
	// tenant A's job deletes it, and reads none of tenant B's messages.
	e.st.put(domain.Delivery{DeliveryID: "dl_a", TenantID: tenantA, EndpointID: "ep_1", State: domain.StateDelivered, ReplayedAt: timePtr(sentAt.Add(time.Minute))})
	e.clk.Advance(3 * time.Second) // visible again
	handle(`{"kind":"sweep","tenant_id":"` + tenantA + `"}`)
	_, there := e.q.dlqState(a)
	require.False(t, there, "its tenant's sweep deletes the stale copy")
	require.Equal(t, 5, reads(), "tenant A's one message read, B's not")
	require.Equal(t, 3, receives(b), "B's received, and kept unread")
}

// The arrivals (SQS's redrive target: a message whose receives ran out
// while deliver recorded nothing) are checked as a DLQ message is, and the
// others moved to the DLQ, each received once: a missed death is recorded
// and its message moved; a stale copy, or an erased tenant's, is deleted;
// a malformed one is moved as it is.
func TestScheduledSweepMovesTheArrivals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.tenants(t, tenantB)
	sentAt := e.t0.Add(-time.Hour)
	e.st.put(domain.Delivery{DeliveryID: "pending", TenantID: tenantA, EndpointID: "ep_1", State: domain.StatePending, Attempts: 3})
	e.dead("marked", tenantA, "ep_1", "order.created", e.t0.Add(-time.Minute)) // MarkDeadFirst, then the function stopped
	e.st.put(domain.Delivery{DeliveryID: "delivered", TenantID: tenantA, EndpointID: "ep_1", State: domain.StateDelivered, DeliveredAt: timePtr(sentAt.Add(time.Minute))})
	for _, id := range []string{"pending", "norecord", "marked", "delivered"} {
		e.q.addArrival(body(id, tenantA, "ep_1", "order.created"), sentAt)
	}
	e.q.addArrival(body("erased", tenantB, "ep_1", "order.created"), sentAt)
	e.q.addArrival("{malformed", sentAt)
	e.q.fail(fault{method: "SendMessage", call: 1}) // the first move fails: the arrival stays for the next pass

	run := func() {
		t.Helper()
		resp, err := e.w.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "s", Body: `{"sweep":true,"reconcile":true}`}}})
		require.NoError(t, err)
		require.Len(t, resp.BatchItemFailures, 1, "the failed move fails the schedule's message")
	}
	run()
	require.Len(t, e.q.arrivals, 1, "all but the failed move are done")
	require.Len(t, e.q.dlq, 3)
	e.clk.Advance(2 * time.Minute) // the failed one is visible again
	resp, err := e.w.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "s", Body: `{"sweep":true,"reconcile":true}`}}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Empty(t, e.q.arrivals)

	var moved []string
	for _, m := range e.q.sentTo(dlqURL) {
		msg, err := message.Decode(m.Body)
		if err != nil {
			moved = append(moved, m.Body)
			continue
		}
		moved = append(moved, msg.DeliveryID)
		require.Equal(t, *message.GroupID(tenantA), m.Group, "in its tenant's message group")
	}
	require.ElementsMatch(t, []string{"pending", "norecord", "marked", "{malformed"}, moved, "each moved once; the failed move by the next pass")
	for _, m := range e.q.dlq {
		require.NotEqual(t, body("delivered", tenantA, "ep_1", "order.created"), m.Body, "a stale copy is deleted, not moved")
		require.NotContains(t, m.Body, "erased")
	}
	for _, id := range []string{"pending", "norecord"} {
		d, indexed := e.st.get(id)
		require.Equal(t, domain.StateDead, d.State, id)
		require.True(t, indexed, "%s listed in the tenant's DLQ", id)
		require.Equal(t, "death_not_recorded", d.AttemptLog[len(d.AttemptLog)-1].Error, id)
	}
	d, _ := e.st.get("erased")
	require.Empty(t, d.DeliveryID, "no record made for an erased tenant")
}

// A replay step claims an SQS batch's worth of deliveries at once, not one
// after another (issue 37: the soak's replay ran at about 35 a second
// against its 200, bound by its sequential writes): one ClaimForReplay
// call a chunk of ten, which the store makes one transaction.
func TestReplayClaimsAChunkAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := e.deadN("dl_", 20)
	job := e.start(t, domain.Job{JobID: "rj_chunk", TenantID: tenantA, Kind: domain.KindIDs, Args: &replay.IDs{IDs: ids}})
	e.run(t, e.w, job)
	e.st.mu.Lock()
	batches := slices.Clone(e.st.claimBatches)
	e.st.mu.Unlock()
	require.Equal(t, []int{10, 10}, batches, "a chunk's ten claims in one call")
	require.Equal(t, 20, e.st.job(job).Replayed)
	e.requireNoLoss(t, ids)
}

// The operator's redrive handles a receive's ten messages at once, where
// each waited for the one before (read, claim, send, release, delete):
// here each claim waits until ten are under way.
func TestRedriveHandlesAReceiveAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	old := e.t0.Add(-time.Hour)
	ids := e.deadInDLQ("r%02d", 20, old)
	most := claimsTogether(e, 10)
	job := e.start(t, domain.Job{JobID: "rj_redrive", Kind: domain.KindRedrive, Args: &dlq.RedriveArgs{}})
	e.clk.Advance(time.Second)
	e.run(t, e.w, job)
	require.Equal(t, 10, most(), "a receive's ten claims under way together")
	require.Equal(t, 20, e.st.job(job).Replayed)
	requireOnce(t, e, ids, job)
}

// claimsTogether makes each claim wait (10 s at most) until n are under
// way at once, which claims made one after another never are, and returns
// the most that were.
func claimsTogether(e *env, n int) (most func() int) {
	var mu sync.Mutex
	inFlight, peak := 0, 0
	all := make(chan struct{})
	var once sync.Once
	e.st.beforeClaim = func(string, string) {
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		if inFlight == n {
			once.Do(func() { close(all) })
		}
		mu.Unlock()
		select {
		case <-all:
		case <-time.After(10 * time.Second):
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
	}
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

// deadInDLQ makes n dead deliveries of tenant A (ids by format, of i),
// dead at old, each with its message in the DLQ, and returns their ids.
func (e *env) deadInDLQ(format string, n int, old time.Time) []string {
	var ids []string
	for i := range n {
		id := fmt.Sprintf(format, i)
		e.dead(id, tenantA, "ep_1", "order.created", old)
		e.q.addDLQ(body(id, tenantA, "ep_1", "order.created"), old)
		ids = append(ids, id)
	}
	return ids
}
