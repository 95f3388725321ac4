//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/tooling/apiclient"
	"github.com/hookline/hookline/tooling/harness"
	"github.com/hookline/hookline/verify"
	"github.com/stretchr/testify/require"
)

// TestUpgradeKeptEverything: what the upgrade test (scripts/upgrade.sh,
// the first deploy of `make test`) wrote through each earlier release
// before it upgraded the stack step by step to this version (the plan of
// docs/deploying.md) is still there after it: the tenant's key still
// authenticates; its endpoints are listed and read; every event is read
// by id with its deliveries in the states they had (events of a release
// whose producers wrote log_pk also listed in GET /v1/events, and their
// deliveries in GET /v1/deliveries); the dead are listed in the DLQ
// (a release's under gsi1, another's under by_dead) and replayed to a new
// receiver, delivered and signed with the secret the release sealed; the
// replay job written before is read; the endpoint's stats count the
// release's attempts; and a new event is delivered, signed, to both
// endpoints. The fixture is .local/upgrade-fixture.json: missing in CI is
// a failure (the upgrade test did not run); elsewhere a skip, as on a
// local cloud that already held the stack.
func TestUpgradeKeptEverything(t *testing.T) {
	t.Parallel()
	f, err := harness.LoadUpgradeFixture(filepath.Join("..", harness.UpgradeFixturePath))
	if errors.Is(err, fs.ErrNotExist) {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: the upgrade test (scripts/upgrade.sh) did not run before the deploy", harness.UpgradeFixturePath)
		}
		t.Skipf("%s is missing: the upgrade test runs on a fresh local cloud (make local-down, then make test)", harness.UpgradeFixturePath)
	}
	require.NoError(t, err)
	require.NotEmpty(t, f.Phases)
	for _, p := range f.Phases {
		t.Run(p.Release, func(t *testing.T) {
			t.Parallel()
			checkUpgradePhase(t, p)
		})
	}
}

func checkUpgradePhase(t *testing.T, p harness.UpgradePhase) {
	ctx := context.Background()
	c := &apiclient.Client{BaseURL: apiclient.LocalURL(env.endpointURL, env.out.ApiID), Key: p.APIKey}

	// The deliveries pending across the upgrade come back to live
	// receivers: the release's ended with the upgrade tool.
	waitRecv, cancelRecv := newReceiver(t, status(200)), newReceiver(t, status(200))
	for _, ep := range []struct {
		id  string
		url string
	}{{p.Waiting.ID, waitRecv.URL}, {p.Cancelling.ID, cancelRecv.URL}} {
		if ep.id != "" {
			require.NoError(t, c.Do(ctx, "PATCH", "/v1/endpoints/"+ep.id, map[string]any{"url": ep.url + "/hook"}, nil))
		}
	}

	// Endpoints: listed and read with the key the release made.
	var eps struct {
		Data []api.EndpointView `json:"data"`
	}
	require.NoError(t, c.Do(ctx, "GET", "/v1/endpoints", nil, &eps))
	var ids []string
	for _, e := range eps.Data {
		ids = append(ids, e.ID)
	}
	want := []string{p.OK.ID, p.Dead.ID}
	for _, id := range []string{p.Waiting.ID, p.Cancelling.ID} {
		if id != "" {
			want = append(want, id)
		}
	}
	require.ElementsMatch(t, want, ids)

	// Events by id, with their deliveries as they were.
	for _, id := range p.Events {
		var v api.EventView
		require.NoError(t, c.Do(ctx, "GET", "/v1/events/"+id, nil, &v), "event %s", id)
		require.Contains(t, string(v.Payload), p.Release)
		require.Len(t, v.Deliveries, 2, "event %s", id)
	}
	for _, id := range p.Delivered {
		var d api.DeliveryView
		require.NoError(t, c.Do(ctx, "GET", "/v1/deliveries/"+id, nil, &d))
		require.Equal(t, domain.StateDelivered, d.State, id)
	}
	// The release's replay job sent one dead delivery again, to a receiver
	// the writer has closed since: it may still be retrying when the tests
	// start, and goes dead within the local schedule (15 s), unless the
	// upgrade's redeploy ended the deliver process holding it: then it is
	// hidden for the queue's visibility timeout first (six times deliver's
	// 8 s locally, 48 s). Two and a half minutes cover both. Or the
	// operator's redrive (TestOperatorRedriveEmptiesTheDLQ, which moves
	// the whole DLQ back before the parallel tests) claimed it since: it
	// was dead, with its message, after the upgrade, which is what this
	// checks; sent again to the closed receiver, its endpoint's breaker
	// may then hold it for minutes.
	revived := map[string]bool{}
	for _, id := range p.DeadDeliveries {
		var d api.DeliveryView
		require.Eventually(t, func() bool {
			if c.Do(ctx, "GET", "/v1/deliveries/"+id, nil, &d) == nil && d.State == domain.StateDead {
				return true
			}
			revived[id] = redrivenSince(ctx, p, id)
			return revived[id]
		}, 150*time.Second, time.Second, "delivery %s dead again, or claimed dead by a redrive since", id)
	}
	if p.LoggedEvents {
		var events struct {
			Data []api.PublishedEventView `json:"data"`
		}
		require.NoError(t, c.Do(ctx, "GET", "/v1/events?limit=100", nil, &events))
		var listed []string
		for _, e := range events.Data {
			listed = append(listed, e.ID)
		}
		require.Subset(t, listed, p.Events, "the message log lists the events written before (beside the tenant's operational events)")
		var log struct {
			Data []api.DeliveryView `json:"data"`
		}
		require.NoError(t, c.Do(ctx, "GET", "/v1/deliveries?limit=100", nil, &log))
		listed = listed[:0]
		for _, d := range log.Data {
			listed = append(listed, d.ID)
		}
		require.Subset(t, listed, append(slices.Clone(p.Delivered), p.DeadDeliveries...), "the delivery log lists the deliveries written before")
	}

	// The DLQ lists the dead; the replay job written before is read.
	dead, err := harness.ListDead(ctx, c)
	require.NoError(t, err)
	var listedDead []string
	for _, d := range dead {
		listedDead = append(listedDead, d.ID)
		// A pending one may have died already if its retry beat the
		// receiver's change above; it is replayed below.
		require.True(t, slices.Contains(p.DeadDeliveries, d.ID) || slices.Contains(p.Pending, d.ID), "dead letter %s was written before", d.ID)
	}
	for _, id := range p.DeadDeliveries {
		// Unless this run's redrive revived it since (it may still be
		// retrying): it reaches the receiver below by its own retries.
		require.True(t, slices.Contains(listedDead, id) || revived[id] || redrivenSince(ctx, p, id), "dead letter %s is listed", id)
	}
	var job api.JobView
	require.Eventually(t, func() bool {
		return c.Do(ctx, "GET", "/v1/replays/"+p.ReplayJob, nil, &job) == nil && job.CompletedAt != nil
	}, 60*time.Second, time.Second, "the replay job written before is complete: %+v", job)

	// The endpoint's stats count the release's attempts.
	var stats api.EndpointStatsView
	require.NoError(t, c.Do(ctx, "GET", "/v1/endpoints/"+p.OK.ID+"/stats", nil, &stats))
	require.GreaterOrEqual(t, stats.Totals.Delivered, int64(len(p.Delivered)), "%+v", stats.Totals)

	// Replayed to a receiver that answers now: delivered, signed with the
	// secret the release sealed.
	okRecv, deadRecv := newReceiver(t, status(200)), newReceiver(t, status(200))
	require.NoError(t, c.Do(ctx, "PATCH", "/v1/endpoints/"+p.OK.ID, map[string]any{"url": okRecv.URL + "/hook"}, nil))
	require.NoError(t, c.Do(ctx, "PATCH", "/v1/endpoints/"+p.Dead.ID, map[string]any{"url": deadRecv.URL + "/hook"}, nil))
	require.NoError(t, c.Do(ctx, "POST", "/v1/dlq/replay", map[string]any{"delivery_ids": p.DeadDeliveries}, &job))
	deadVerifier, err := verify.New(p.Dead.Secret)
	require.NoError(t, err)
	// A revived one (redrivenSince) is not replayed: its own retry brings
	// it, once its endpoint's breaker lets a probe through.
	patience := 90 * time.Second
	if len(revived) > 0 {
		patience = 4 * time.Minute
	}
	got := deadRecv.waitFor(t, len(p.DeadDeliveries), patience)
	var replayed []string
	for _, r := range got {
		require.NoError(t, deadVerifier.Verify(r.Header, r.Body), "signed with the secret sealed before the upgrade")
		replayed = append(replayed, r.Header.Get("webhook-id"))
	}
	require.Subset(t, replayed, p.DeadDeliveries)
	for _, id := range p.DeadDeliveries {
		waitDelivery(t, id, patience, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
	}

	checkPendingAcross(t, c, p, waitRecv, cancelRecv)

	// A new event after the upgrade reaches both endpoints, signed.
	ev := event(tenant{ID: p.TenantID}, fmt.Sprintf("evt_after_upgrade_%s_%d", p.Release, time.Now().UnixNano()), "upgrade.after", `{"after":true}`)
	write(t, ev)
	okVerifier, err := verify.New(p.OK.Secret)
	require.NoError(t, err)
	r := okRecv.waitFor(t, 1, 60*time.Second)[0]
	require.NoError(t, okVerifier.Verify(r.Header, r.Body))
	require.Equal(t, ev.ID, r.Header.Get("X-Event-Id"))
	deadRecv.waitFor(t, len(p.DeadDeliveries)+1, 60*time.Second)
	if p.LoggedEvents {
		// The message log lists the new event (from its page) and the
		// release's (from the index) in one listing, a page at a time.
		events, err := harness.ListAll[api.PublishedEventView](ctx, c, "/v1/events?limit=2")
		require.NoError(t, err)
		var listed []string
		for _, e := range events {
			listed = append(listed, e.ID)
		}
		require.Contains(t, listed, ev.ID, "the event written after the upgrade, from its page")
		require.Subset(t, listed, p.Events, "and the release's, from the index")
	}
}

// checkPendingAcross: the deliveries pending across the upgrade (their
// receiver answered 429 with a Retry-After of harness.UpgradeRetryAfter)
// are attempted again by the new code from the messages the release
// queued, and delivered, signed with the secret the release sealed (one
// that died first, its retry having beaten the receiver's change, is
// replayed); the deliveries the release cancelled stay cancelled, and
// their messages, back by then, send nothing.
func checkPendingAcross(t *testing.T, c *apiclient.Client, p harness.UpgradePhase, waitRecv, cancelRecv *receiver) {
	ctx := context.Background()
	wait := time.Duration(harness.UpgradeRetryAfter)*time.Second + 90*time.Second
	for _, id := range p.Pending {
		var d api.DeliveryView
		require.Eventually(t, func() bool {
			return c.Do(ctx, "GET", "/v1/deliveries/"+id, nil, &d) == nil && (d.State == domain.StateDelivered || d.State == domain.StateDead)
		}, wait, time.Second, "the pending delivery %s is attempted after the upgrade", id)
		if d.State == domain.StateDead {
			var job api.JobView
			require.NoError(t, c.Do(ctx, "POST", "/v1/dlq/replay", map[string]any{"delivery_ids": []string{id}}, &job))
		}
		waitDelivery(t, id, 90*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
		require.NoError(t, c.Do(ctx, "GET", "/v1/deliveries/"+id, nil, &d))
		require.GreaterOrEqual(t, d.Attempts, 2, "the release's attempt and the new code's")
	}
	if len(p.Pending) > 0 {
		v, err := verify.New(p.Waiting.Secret)
		require.NoError(t, err)
		var got []string
		for _, r := range waitRecv.waitFor(t, len(p.Pending), 30*time.Second) {
			require.NoError(t, v.Verify(r.Header, r.Body), "signed with the secret sealed before the upgrade")
			got = append(got, r.Header.Get("webhook-id"))
		}
		require.Subset(t, got, p.Pending)
	}
	if len(p.Cancelled) > 0 {
		// The cancelled delivery was attempted just after the pending one,
		// with the same Retry-After: its message is back within seconds of
		// the pending one's.
		time.Sleep(15 * time.Second)
	}
	for _, id := range p.Cancelled {
		var d api.DeliveryView
		require.NoError(t, c.Do(ctx, "GET", "/v1/deliveries/"+id, nil, &d))
		require.Equal(t, domain.StateCancelled, d.State, "cancelled before the upgrade, cancelled after")
	}
	if len(p.Cancelled) > 0 {
		require.Empty(t, cancelRecv.requests(), "a cancelled delivery's message sends nothing")
	}
}

// redrivenSince reports whether delivery id, dead in release phase p, was
// claimed since by another job than the release's own replay: the
// operator's redrive of TestOperatorRedriveEmptiesTheDLQ, which moves the
// whole DLQ back (the fixture's dead letters too) before the parallel
// tests run. Its claim needed the delivery dead, with its message, after
// the upgrade, which is what the checks of dead letters hold; sent again to
// the release's closed receiver, it then retries, or its endpoint's
// breaker holds it, for a while.
func redrivenSince(ctx context.Context, p harness.UpgradePhase, id string) bool {
	rec, err := env.store.Delivery(ctx, id)
	return err == nil && rec.ReplayedBy != "" && rec.ReplayedBy != p.ReplayJob && strings.HasPrefix(rec.ReplayedBy, "rj_")
}
