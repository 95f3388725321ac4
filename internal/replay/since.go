package replay

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"sync"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/selection"
	"github.com/hookline/hookline/internal/store"
)

// MessageLog is what a replay since a time reads of the outbox table: its
// events by the message log's index, and one event with its payload
// (messagelog.Reader; storefake.MessageLog in the tests).
type MessageLog interface {
	selection.Events
	Event(ctx context.Context, tenantID, id string) (domain.Event, error)
}

// selectSince picks the ids of the next page of a KindSince job's range,
// those with a record in a state it selects, and advances the cursor;
// done is true when no page follows.
func (w *Replayer) selectSince(ctx context.Context, j *domain.Job, sends int) ([]string, bool, error) {
	a, err := jobs.ArgsOf[Since](j)
	if err != nil {
		return nil, false, err
	}
	if w.MessageLog == nil {
		return nil, false, fmt.Errorf("replay job %s: a replay since a time needs the message log", j.JobID)
	}
	sel := selection.Selector{Events: w.MessageLog, Records: w.Store}
	cs, next, err := sel.Page(ctx, j.TenantID, a.Range, sends, j.Cursor)
	if err != nil {
		return nil, false, err
	}
	var ids []string
	for _, c := range cs {
		if c.Found && a.Range.Selects(c.Delivery.State) {
			ids = append(ids, c.ID)
		}
	}
	j.Cursor = next
	return ids, next == "", nil
}

// sinceChunk sends the deliveries ids of a KindSince step's chunk (as snap
// read them) again, or counts why not, in order (sinceOne), the events of
// those to rebuild read at once: a chunk's ten outbox reads take one round
// trip, where one after another they took ten (issue 37: a replay since a
// time ran well under its rate).
func (w *Replayer) sinceChunk(ctx context.Context, j *domain.Job, ids []string, snap store.Snapshot, disabled map[string]bool, out *replaySends) error {
	a, err := jobs.ArgsOf[Since](j)
	if err != nil {
		return err
	}
	events := make([]eventRead, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		d, found := snap.Deliveries[id]
		if !found || d.TenantID != j.TenantID || claimsPath(j, d) || !a.Range.Selects(d.State) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			events[i].ev, events[i].err = w.MessageLog.Event(ctx, d.TenantID, d.EventID)
			events[i].read = true
		}()
	}
	wg.Wait()
	for i, id := range ids {
		if err := w.sinceOne(ctx, j, id, snap, disabled, events[i], out); err != nil {
			return err
		}
	}
	return nil
}

// eventRead is a delivery's event as sinceChunk read it from the message
// log (read false: not read).
type eventRead struct {
	ev   domain.Event
	err  error
	read bool
}

// sinceOne sends delivery id of a KindSince step (as snap read it) again,
// or counts why not: a dead one as a replay by filter does (claimed, its
// stored message), any other (or a dead one without its message) rebuilt
// from its event's outbox item (ev, read by sinceChunk).
func (w *Replayer) sinceOne(ctx context.Context, j *domain.Job, id string, snap store.Snapshot, disabled map[string]bool, ev eventRead, out *replaySends) error {
	a, err := jobs.ArgsOf[Since](j)
	if err != nil {
		return err
	}
	d, found := snap.Deliveries[id]
	switch {
	case !found || d.TenantID != j.TenantID:
		jobs.Skip(j, id, domain.SkipNotFound)
		return nil
	case claimsPath(j, d):
		d, claimed, err := w.claim(ctx, j, id, snap, disabled)
		if err != nil || !claimed {
			return err
		}
		return out.add(ctx, id, d)
	case !a.Range.Selects(d.State):
		jobs.Skip(j, id, domain.SkipNotSelected) // moved on since it was selected
		return nil
	}
	off, err := w.endpointOff(ctx, d, disabled)
	if err != nil {
		return err
	}
	if off {
		jobs.Skip(j, id, domain.SkipEndpointDisabled)
		return nil
	}
	m, reason, err := w.rebuild(d, ev)
	if err != nil {
		return err
	}
	if reason != "" {
		a.NotRebuilt++
		jobs.Skip(j, id, reason)
		return nil
	}
	tp := out.traceSend(ctx, &m)
	body, err := message.Encode(m)
	if err != nil {
		return fmt.Errorf("rebuild delivery %s: %w", d.DeliveryID, err)
	}
	return out.addBody(ctx, id, string(body), d.TenantID, tp, false)
}

// claimsPath reports whether d goes through a replay's claim: dead with
// its message, or claimed or replayed by this job already (a step run
// again after a stop).
func claimsPath(j *domain.Job, d domain.Delivery) bool {
	return (d.State == domain.StateDead && d.Message != "") || d.ReplayClaimedBy == j.JobID || (d.ReplayedBy == j.JobID && d.ReplayClaimedBy == "")
}

// rebuild makes delivery d's message again from its event's outbox item
// (r, as the message log answered),
// as a resend does, with its id (webhook-id) and a fresh schedule: a
// delivered delivery's as a resend (deliver attempts it, logs it as the
// resend's and leaves the delivery delivered), a pending, cancelled or
// dead one's as a replay. reason is why it cannot be rebuilt ("" when it
// was): the outbox item is gone, or its payload is past the retention.
func (w *Replayer) rebuild(d domain.Delivery, r eventRead) (m message.Message, reason string, err error) {
	if !r.read {
		return m, "", fmt.Errorf("rebuild delivery %s: its event was not read", d.DeliveryID)
	}
	ev, err := r.ev, r.err
	if errors.Is(err, store.ErrNotFound) {
		return m, domain.SkipEventGone, nil
	}
	if err != nil {
		return m, "", err
	}
	now := w.now().UTC()
	if ev.Payload == nil || now.Sub(ev.OccurredAt) > cmp.Or(w.PayloadRetention, domain.DefaultPayloadRetention) {
		return m, domain.SkipPayloadExpired, nil
	}
	return message.Message{
		DeliveryID: d.DeliveryID, TenantID: d.TenantID, EndpointID: d.EndpointID, EventID: ev.ID, EventType: ev.Type,
		OccurredAt: ev.OccurredAt, Sequence: ev.Sequence, Payload: ev.Payload, ReplayedAt: &now, Resend: d.State == domain.StateDelivered,
		TraceParent: ev.TraceParent, // the replay's span joins the event's trace
	}, "", nil
}
