package cancel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/filter"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/selection"
	"github.com/hookline/hookline/internal/store"
)

// Store is what a cancel needs of the state table: the selection's reads,
// the cancel's write and the job's checkpoint.
type Store interface {
	selection.Records
	CancelDelivery(ctx context.Context, d domain.Delivery, job string, at time.Time) (domain.Delivery, bool, error)
	SaveJob(ctx context.Context, j *domain.Job) error
}

var _ Store = (*store.Store)(nil)

// MessageLog lists a tenant's events and reads one with its payload
// (messagelog.Reader).
type MessageLog interface {
	selection.Events
	Event(ctx context.Context, tenantID, id string) (domain.Event, error)
}

// StepWrites bounds the deliveries one step looks at (and so its writes).
const StepWrites = 500

// stepGap is the pause between two steps, which spreads a large cancel's
// writes.
const stepGap = time.Second

// Canceller runs the steps of cancel jobs. Build it with a literal.
type Canceller struct {
	Store      Store
	MessageLog MessageLog
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

var filters filter.Cache

func (c *Canceller) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Step runs one step of cancel job j: the next page of its range. It
// reports done when no page follows (jobs.StepFunc).
func (c *Canceller) Step(ctx context.Context, j *domain.Job) (bool, time.Duration, error) {
	a, err := jobs.ArgsOf[Args](j)
	if err != nil {
		return false, 0, err
	}
	if c.MessageLog == nil || a.Range.EndpointID == "" {
		return false, 0, fmt.Errorf("cancel job %s: needs the message log and a range of one endpoint", j.JobID)
	}
	sel := selection.Selector{Events: c.MessageLog, Records: c.Store}
	cs, next, err := sel.Page(ctx, j.TenantID, a.Range, StepWrites, j.Cursor)
	if err != nil {
		return false, 0, err
	}
	at := c.now().UTC()
	for _, cand := range cs {
		if err := c.one(ctx, j, a, cand, at); err != nil {
			return false, 0, err
		}
	}
	j.Cursor, j.Status, j.Steps = next, domain.StatusRunning, j.Steps+1
	if next == "" {
		return true, 0, nil
	}
	if err := c.Store.SaveJob(ctx, j); err != nil {
		return false, 0, err
	}
	return false, stepGap, nil
}

// one cancels candidate cand, or counts why not. Matched counts every
// delivery of the endpoint looked at.
func (c *Canceller) one(ctx context.Context, j *domain.Job, a *Args, cand selection.Candidate, at time.Time) error {
	d := cand.Delivery
	if !cand.Found {
		routed, err := c.routed(ctx, j, cand)
		if err != nil || !routed {
			return err
		}
		d = domain.Delivery{DeliveryID: cand.ID, TenantID: j.TenantID, EndpointID: cand.Endpoint.EndpointID, EventID: cand.Event.ID, EventType: cand.Event.Type}
	}
	j.Matched++
	cur, ok := d, false
	if !cand.Found || d.State == domain.StatePending {
		var err error
		if cur, ok, err = c.Store.CancelDelivery(ctx, d, j.JobID, at); err != nil {
			return err
		}
	}
	if ok || (cur.State == domain.StateCancelled && cur.CancelledBy == j.JobID) {
		// Cancelled now, or by this job before it stopped and ran the
		// step again.
		a.count(cand.ID)
		return nil
	}
	jobs.Skip(j, cand.ID, domain.SkipNotPending) // delivered, dead or cancelled, or an attempt recorded it first
	return nil
}

// count counts delivery id cancelled, naming the first of them.
func (a *Args) count(id string) {
	a.Cancelled++
	if len(a.CancelledIDs) < MaxCancelledIDs {
		a.CancelledIDs = append(a.CancelledIDs, id)
	}
}

// routed reports whether the event of candidate cand, which has no
// delivery record, went to its endpoint: addressed to it, or of a type it
// takes and matched by its payload filter. An event it cannot tell of (the
// endpoint is gone, the outbox item too) is counted not_routed.
func (c *Canceller) routed(ctx context.Context, j *domain.Job, cand selection.Candidate) (bool, error) {
	ev, ep := cand.Event, cand.Endpoint
	switch {
	case ev.EndpointID == ep.EndpointID:
		return true, nil
	case ep.URL == "" && ep.Type == "":
		jobs.Skip(j, cand.ID, domain.SkipNotRouted) // the endpoint is gone
		return false, nil
	case domain.IsOperational(ev.Type) && !ep.SubscribesExplicitly(ev.Type), !ep.Accepts(ev.Type):
		return false, nil // not the endpoint's event: no delivery
	case ep.Filter == "":
		return true, nil
	}
	f, err := filters.Parse(ep.Filter)
	if err != nil {
		return true, nil // a filter that fails opens, as enqueue's does
	}
	full, err := c.MessageLog.Event(ctx, j.TenantID, ev.ID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && full.Payload == nil) {
		jobs.Skip(j, cand.ID, domain.SkipNotRouted)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return f.Match(full.Payload), nil // over its work budget: routed, as enqueue delivers it unfiltered
}
