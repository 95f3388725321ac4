package erasure

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/dlq"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/messagelog"
	"github.com/hookline/hookline/internal/store"
)

// Store checkpoints an erasure's job record (conditional on the version
// read: store.ErrConflict).
type Store interface {
	SaveJob(ctx context.Context, j *domain.Job) error
}

var _ Store = (*store.Store)(nil)

// TenantEndpoints lists a tenant's endpoints, read once when its erasure
// begins (the ids of its deliveries derive from them).
type TenantEndpoints interface {
	Endpoints(ctx context.Context, tenantID string) ([]domain.Endpoint, error)
}

// IndexedErasures deletes a page of a tenant's items found through its
// indexes (of one kind; its open jobs with its jobs), and the items under
// its own key.
type IndexedErasures interface {
	EraseIndexed(ctx context.Context, tenantID, kind string, limit int) (int, bool, error)
	EraseTenantItems(ctx context.Context, tenantID string, limit int) (map[string]int, bool, error)
}

// DerivedErasures deletes the items whose keys derive from an event's or an
// endpoint's: its deliveries and its stats (the hour items and those by
// event type).
type DerivedErasures interface {
	EraseDeliveries(ctx context.Context, tenantID string, ids []string) (int, error)
	EraseStats(ctx context.Context, tenantID, endpointID string, limit int) (int, bool, error)
}

// Erasures is what an erasure deletes from the state table, kind by kind
// (store.Store's Erase methods), composed of its ports.
type Erasures interface {
	TenantEndpoints
	IndexedErasures
	DerivedErasures
}

var _ Erasures = (*store.Store)(nil)

// OutboxEvent is an outbox item as the erasure sees it: its id, and the
// endpoint it names (empty: every endpoint of its tenant).
type OutboxEvent struct {
	ID, EndpointID string
	// OccurredAt names its deliveries (domain.DeliveryID).
	OccurredAt time.Time
	// page is the message log page that listed it, if one did.
	page messagelog.Page
}

// Outbox lists and deletes a tenant's outbox items (an *OutboxTable), and
// the message log pages that list them, once their items are deleted.
type Outbox interface {
	TenantEvents(ctx context.Context, tenantID string, limit int) ([]OutboxEvent, error)
	DeleteEvent(ctx context.Context, id string) (bool, error)
	DeletePages(ctx context.Context, evs []OutboxEvent) error
}

// erasePage is how many items an erasure deletes between two checkpoints.
const erasePage = 100

// eraseStepTime bounds the time one step of an erasure works before it
// checkpoints and gives its worker up.
const eraseStepTime = 2 * time.Minute

// Eraser runs the steps of tenants' erasures.
type Eraser struct {
	Store Store
	// Erasures deletes the tenant's state-table items, Outbox its outbox
	// items. Nil: a step fails.
	Erasures Erasures
	Outbox   Outbox
	// DLQ holds every tenant's dead messages; the tenant's are deleted.
	DLQ dlq.Queue
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

func (w *Eraser) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// Step runs one step of a tenant's erasure: phase after phase
// (domain.ErasePhases), a page at a time, each page's deletions counted and
// checkpointed before the next; every deletion is idempotent, so a step
// stopped anywhere is resumed by the job's message and does the rest. It
// reports done when the last phase is: the caller completes the job, or
// else sends its next step, after next (the DLQ phase waiting for messages
// someone else holds hidden: eraseDLQ).
func (w *Eraser) Step(ctx context.Context, j *domain.Job) (done bool, next time.Duration, err error) {
	a, err := jobs.ArgsOf[Args](j)
	if err != nil {
		return false, 0, err
	}
	e := &a.Erasure
	if e.TenantID == "" {
		return false, 0, fmt.Errorf("erase job %s: no tenant", j.JobID)
	}
	if w.Erasures == nil || w.Outbox == nil {
		return false, 0, fmt.Errorf("erase job %s: the worker has no Erasures or Outbox", j.JobID)
	}
	if e.Erased == nil {
		e.Erased = map[string]int{}
	}
	if j.Status != domain.StatusRunning {
		if err := w.begin(ctx, j, e); err != nil {
			return false, 0, err
		}
	}
	deadline := w.now().Add(eraseStepTime)
	for w.now().Before(deadline) {
		counts, done, err := w.erasePhase(ctx, e)
		for k, n := range counts {
			e.Erased[k] += n
		}
		wait := errors.Is(err, errDLQHeld)
		if err != nil && !wait {
			return false, 0, err
		}
		if done {
			i := slices.Index(domain.ErasePhases, e.Phase)
			if i < 0 || i == len(domain.ErasePhases)-1 {
				e.Phase = ""
				return true, 0, nil
			}
			e.Phase = domain.ErasePhases[i+1]
		}
		j.Steps++
		if err := w.Store.SaveJob(ctx, j); err != nil {
			return false, 0, err
		}
		if wait {
			return false, dlqWait, nil
		}
	}
	return false, 0, nil
}

// begin reads the tenant's endpoints, once, before any is deleted (the ids
// of the tenant's deliveries derive from them), and checkpoints the first
// phase.
func (w *Eraser) begin(ctx context.Context, j *domain.Job, e *domain.Erasure) error {
	eps, err := w.Erasures.Endpoints(ctx, e.TenantID)
	if err != nil {
		return err
	}
	e.Endpoints = e.Endpoints[:0]
	for _, ep := range eps {
		e.Endpoints = append(e.Endpoints, ep.EndpointID)
	}
	j.Status, e.Phase = domain.StatusRunning, domain.ErasePhases[0]
	return w.Store.SaveJob(ctx, j)
}

// erasePhase deletes a page of the items of e's phase, and reports done
// when none are left.
func (w *Eraser) erasePhase(ctx context.Context, e *domain.Erasure) (map[string]int, bool, error) {
	switch e.Phase {
	case domain.EraseDeliveries:
		counts, done, err := w.eraseEvents(ctx, e)
		if err != nil || !done {
			return counts, done, err
		}
		// Then what the events no longer lead to (a delivery to an
		// endpoint deleted before the erasure, or whose event expired).
		n, done, err := w.Erasures.EraseIndexed(ctx, e.TenantID, domain.EraseDeliveries, erasePage)
		counts[domain.EraseDeliveries] += n
		return counts, done, err
	case domain.EraseDLQ:
		n, done, err := w.eraseDLQ(ctx, e)
		return map[string]int{domain.EraseDLQ: n}, done, err
	case domain.EraseStats:
		total := 0
		for _, ep := range e.Endpoints {
			n, done, err := w.Erasures.EraseStats(ctx, e.TenantID, ep, erasePage)
			total += n
			if err != nil || !done {
				return map[string]int{e.Phase: total}, false, err
			}
		}
		return map[string]int{e.Phase: total}, true, nil
	case domain.EraseTenant:
		return w.Erasures.EraseTenantItems(ctx, e.TenantID, erasePage)
	}
	n, done, err := w.Erasures.EraseIndexed(ctx, e.TenantID, e.Phase, erasePage)
	return map[string]int{e.Phase: n}, done, err
}

// eraseEvents deletes a page of the tenant's outbox items, each after the
// deliveries of its event (their ids derive from the event's and the
// endpoints'), so that a stop between the two leaves the item to find them
// by again.
func (w *Eraser) eraseEvents(ctx context.Context, e *domain.Erasure) (map[string]int, bool, error) {
	evs, err := w.Outbox.TenantEvents(ctx, e.TenantID, erasePage)
	if err != nil {
		return nil, false, err
	}
	counts := map[string]int{}
	for _, ev := range evs {
		eps := e.Endpoints
		if ev.EndpointID != "" {
			eps = []string{ev.EndpointID}
		}
		ids := make([]string, 0, 2*len(eps))
		for _, ep := range eps {
			both := domain.DeliveryIDs(e.TenantID, ev.ID, ep, ev.OccurredAt)
			ids = append(ids, both[:]...)
		}
		n, err := w.Erasures.EraseDeliveries(ctx, e.TenantID, ids)
		counts[domain.EraseDeliveries] += n
		if err != nil {
			return counts, false, err
		}
		deleted, err := w.Outbox.DeleteEvent(ctx, ev.ID)
		if err != nil {
			return counts, false, err
		}
		if deleted {
			counts[domain.EraseOutboxItems]++
		}
	}
	return counts, len(evs) == 0, w.Outbox.DeletePages(ctx, evs)
}

// eraseDLQ deletes the tenant's messages from the DLQ, which holds every
// tenant's: each message received is deleted if it is the tenant's, and
// held (hidden) if not until the pass ends, then made visible again at once
// (visibility 0), so that the pass sees the messages behind it. The DLQ has
// no redrive: a receive costs its messages nothing. A pass that runs out of
// time is not done, and the next step goes on.
//
// A pass cannot see the messages someone else holds hidden meanwhile (a
// sweep re-hides each it reads for 2 s while it runs, a redrive hides them
// 10 minutes): after three receives in a row bring nothing it has not seen,
// it asks SQS how many messages are hidden. More than it holds itself: it
// is not done, and errDLQHeld has the job's next step try again after
// dlqWait, when a sweep's have long been shown again. This is bounded
// (dlqWaits steps per erasure: another consumer may hold messages for
// longer, a busy DLQ may always have some hidden, and SQS's count is
// approximate and may lag the deletes just made): then the phase is done,
// and the count still hidden by others is recorded (DLQLeftToSweep). Any of
// the tenant's among them are not left for good: the DLQ sweep deletes a
// tombstoned tenant's messages and records nothing of them, and deliver
// drops those a redrive sends back.
func (w *Eraser) eraseDLQ(ctx context.Context, e *domain.Erasure) (int, bool, error) {
	seen := map[string]bool{}
	var held []sqstypes.Message
	defer func() { w.DLQ.Show(ctx, held) }()
	deleted := 0
	deadline := w.now().Add(eraseStepTime / 2)
	for quiet := 0; quiet < 3; {
		if !w.now().Before(deadline) {
			return deleted, false, nil
		}
		msgs, err := w.DLQ.Receive(ctx, 10, eraseStepTime)
		if err != nil {
			return deleted, false, err
		}
		fresh := false
		for _, m := range msgs {
			id := aws.ToString(m.MessageId)
			fresh = fresh || !seen[id]
			seen[id] = true
			msg, derr := message.Decode(aws.ToString(m.Body))
			if derr != nil || msg.TenantID != e.TenantID {
				held = append(held, m)
				continue
			}
			if err := w.DLQ.Delete(ctx, m); err != nil {
				return deleted, false, err
			}
			deleted++
		}
		if fresh {
			quiet = 0
		} else {
			quiet++
		}
	}
	return w.othersHold(ctx, e, deleted, len(held))
}

// othersHold ends a DLQ pass that holds held messages (see eraseDLQ): not
// done (errDLQHeld) while SQS counts more hidden and the erasure has waited
// fewer than dlqWaits times, else done, the count left to the sweep
// recorded.
func (w *Eraser) othersHold(ctx context.Context, e *domain.Erasure, deleted, held int) (int, bool, error) {
	hidden, err := w.DLQ.Hidden(ctx)
	if err != nil {
		return deleted, false, err
	}
	others := max(0, hidden-held)
	if others > 0 && e.DLQWaits < dlqWaits {
		e.DLQWaits++
		return deleted, false, errDLQHeld
	}
	e.DLQLeftToSweep = others
	return deleted, true, nil
}

// errDLQHeld is a DLQ pass's end while others hold messages hidden: the
// step checkpoints and its next one tries again after dlqWait.
var errDLQHeld = errors.New("DLQ messages hidden by another consumer")

// dlqWait is how long an erasure waits for DLQ messages hidden by someone
// else, dlqWaits how many times at most: 3 minutes in all, more than a
// sweep's pass lasts (2 minutes at most).
const (
	dlqWait  = 30 * time.Second
	dlqWaits = 6
)
