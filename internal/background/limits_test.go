package background_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/dlq"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/replay"
	"github.com/stretchr/testify/require"
)

// deadWithPayload stores a dead delivery of tenant A whose message carries a
// payload of n bytes.
func (e *env) deadWithPayload(id string, n int, at time.Time) {
	d := e.dead(id, tenantA, "ep_1", "order.created", at)
	m, err := message.Decode(d.Message)
	if err != nil {
		panic(err)
	}
	m.Payload = json.RawMessage(`"` + strings.Repeat("x", n-2) + `"`)
	b, err := message.Encode(m)
	if err != nil {
		panic(err)
	}
	d.Message = string(b)
	e.st.put(d)
}

// A replay gathers its sends in SendMessageBatch requests that SQS takes:
// at most ten entries and at most 256 KiB in all (the fake refuses anything
// more, as SQS does), so near-limit messages go in smaller batches.
func TestReplayBatchesSplitByBytes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		sizes    []int // payload bytes of each dead delivery
		requests int   // SendMessageBatch requests expected
	}{
		{"small: ten a request", []int{1 << 10, 1 << 10, 1 << 10, 1 << 10, 1 << 10, 1 << 10, 1 << 10, 1 << 10, 1 << 10, 1 << 10, 1 << 10, 1 << 10}, 2},
		{"100 KiB each: two a request", []int{100 << 10, 100 << 10, 100 << 10, 100 << 10, 100 << 10}, 3},
		{"near the outbox's 192 KiB limit: one a request", []int{190 << 10, 190 << 10, 190 << 10}, 3},
		{"mixed", []int{150 << 10, 50 << 10, 60 << 10, 1 << 10, 200 << 10}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			var ids []string
			for i, n := range c.sizes {
				id := fmt.Sprintf("big_%02d", i)
				e.deadWithPayload(id, n, e.t0.Add(-time.Hour+time.Duration(i)*time.Minute))
				ids = append(ids, id)
			}
			job := e.start(t, domain.Job{JobID: "rj_big", TenantID: tenantA, Kind: domain.KindIDs, Args: &replay.IDs{IDs: ids}})
			require.Equal(t, 1, e.run(t, e.w, job), "the fake SQS refuses a batch over 256 KiB, which fails the step")
			requireOnce(t, e, ids, job)
			require.Equal(t, c.requests, e.q.faults.calls["SendMessageBatch"])
		})
	}
}

// A redrive step sends at most its step size, however many messages one
// receive could bring.
func TestRedriveStepSendsAtMostItsStepSize(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.w.StepSends, e.w.Rate = 3, 1
	old := e.t0.Add(-time.Hour)
	var ids []string
	for i := range 8 {
		id := fmt.Sprintf("r%d", i)
		e.dead(id, tenantA, "ep_1", "order.created", old)
		e.q.addDLQ(body(id, tenantA, "ep_1", "order.created"), old)
		ids = append(ids, id)
	}
	job := e.start(t, domain.Job{JobID: "rj_redrive", Kind: domain.KindRedrive, Args: &dlq.RedriveArgs{}})
	e.clk.Advance(time.Second)
	var perStep []int
	for steps := 0; e.st.job(job).Status != domain.StatusCompleted; steps++ {
		require.Less(t, steps, 10)
		before := len(e.q.sentTo(deliveryURL))
		require.NoError(t, e.w.Step(context.Background(), job))
		perStep = append(perStep, len(e.q.sentTo(deliveryURL))-before)
		for _, m := range e.q.dlq {
			require.False(t, m.VisibleAt.After(e.clk.Now()), "a step leaves no message it did not handle hidden")
		}
		e.clk.Advance(5 * time.Second)
	}
	require.Equal(t, []int{3, 3, 2}, perStep)
	requireOnce(t, e, ids, job)
	require.Empty(t, e.q.dlq)
}

// A replay by filter without until replays the deaths that existed when it
// started, not those that happen while it runs: neither other deliveries
// dying since, nor its own replays dying again.
func TestFilterReplayWithoutUntilIsBoundedToDeathsAtStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.w.StepSends = 1
	ids := e.deadN("dl_", 3)
	e.clk.Advance(time.Second)
	j := domain.Job{JobID: "rj_open", TenantID: tenantA, Kind: domain.KindFilter, Args: &replay.Filter{}, Status: domain.StatusQueued}
	require.NoError(t, e.w.Start(context.Background(), &j))
	started := e.clk.Now()
	require.Equal(t, started, argsOf[replay.Filter](t, e.st.job(j.JobID)).Filter.Until, "the upper bound is recorded with the job")

	e.clk.Advance(time.Second)
	e.dead("dl_later", tenantA, "ep_1", "order.created", e.clk.Now())
	require.NoError(t, e.w.Step(context.Background(), j.JobID))
	require.Equal(t, map[string]int{"dl_000": 1}, e.q.replayed())
	// Its first replay dies again at once.
	e.clk.Advance(time.Second)
	again := e.dead("dl_000", tenantA, "ep_1", "order.created", e.clk.Now())
	again.ReplayedAt, again.ReplayedBy = timePtr(started), j.JobID
	e.st.put(again)

	e.run(t, e.w, j.JobID)
	require.Equal(t, map[string]int{"dl_000": 1, "dl_001": 1, "dl_002": 1}, e.q.replayed())
	for _, id := range []string{"dl_later", "dl_000"} {
		d, indexed := e.st.get(id)
		require.Equal(t, domain.StateDead, d.State, "%s died after the job started: not this job's", id)
		require.True(t, indexed)
	}
	require.Equal(t, 3, e.st.job(j.JobID).Replayed)
	_ = ids

	t.Run("an until given is kept", func(t *testing.T) {
		until := e.t0.Add(-90 * time.Minute)
		j := domain.Job{JobID: "rj_until", TenantID: tenantB, Kind: domain.KindFilter, Args: &replay.Filter{Filter: domain.DeadFilter{Until: until}}}
		require.NoError(t, e.w.Start(context.Background(), &j))
		require.Equal(t, until, argsOf[replay.Filter](t, e.st.job(j.JobID)).Filter.Until)
	})
}
