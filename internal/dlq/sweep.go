package dlq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/store"
)

// SweepStore is what the sweep needs of the state table: one sweep per gap,
// the deliveries' records, the death of one recorded on the record as read
// (store.ErrConflict otherwise), and the tenants' tombstones.
type SweepStore interface {
	ClaimSweep(ctx context.Context, gap time.Duration) (bool, error)
	Delivery(ctx context.Context, id string) (domain.Delivery, error)
	RecordAttemptIfUnchanged(ctx context.Context, d domain.Delivery, a domain.Attempt, o domain.Outcome) error
	Erased(ctx context.Context, tenantID string) (bool, error)
}

var _ SweepStore = (*store.Store)(nil)

// Sweeper brings the DLQ in line with the state table: the sweep and
// sweep_reconcile jobs (the reconciliation is Depths').
type Sweeper struct {
	Store SweepStore
	DLQ   Queue
	// Arrivals is the delivery queues' redrive target: what SQS moved
	// there after a message's last receive, on its way to the DLQ
	// (MoveArrivals). A zero URL: none.
	Arrivals Queue
	// Send moves an arrival to the DLQ. Required with Arrivals.
	Send Sender
	// Deaths is told of each death the sweep records (its attempt did
	// not), for delivery.dead. Nil: none.
	Deaths func(ctx context.Context, d domain.Delivery)
	// Now is the clock. Default time.Now.
	Now func() time.Time
	Log *slog.Logger
}

func (w *Sweeper) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// coalesced sweeps the DLQ unless another sweep began within gap.
func (w *Sweeper) coalesced(ctx context.Context, gap time.Duration) error {
	ok, err := w.Store.ClaimSweep(ctx, gap)
	if err != nil {
		return err
	}
	if !ok {
		w.Log.DebugContext(ctx, "DLQ sweep skipped: another began within the gap")
		return nil
	}
	_, _, err = w.Sweep(ctx, "")
	return err
}

// FullPassGap is the least time between two periodic passes over the
// whole DLQ (Periodic, on the DLQSweep schedule): a day. Every message that enters the DLQ was
// checked on its way in (deliver recorded its death before sending it, or
// Arrivals checked it), so a periodic pass only finds copies made stale by
// what no job's sweep follows (a resend, a copy delivered later): each DLQ
// message is received and its record read about 14 times over the DLQ's
// 14 days, where a pass every 5 minutes received it 4,032 times (issue
// 37).
const FullPassGap = 24 * time.Hour

// Periodic is a sweep that names no tenant: the arrivals moved to the DLQ
// (MoveArrivals), and the whole DLQ swept (Sweep) unless another pass
// began within gap (FullPassGap on the DLQSweep schedule, every few
// minutes; jobs.Config.SweepGap for a plain sweep message).
func (w *Sweeper) Periodic(ctx context.Context, gap time.Duration) error {
	_, _, aerr := w.MoveArrivals(ctx)
	return errors.Join(aerr, w.coalesced(ctx, gap))
}

// Sweep deletes from the DLQ the messages whose deliveries were delivered or
// replayed after the message was sent, and those of tenants erased or being
// erased (a tombstone: their records are gone or going, and the message is
// their payload), records the death of a delivery whose message is here
// while its record still says pending or does not exist (its last attempt
// was cut off before it was recorded), and leaves every other message as it
// was. A death is recorded on the record as the sweep read it only: one made
// or changed meanwhile is read again and acted on as it is; never for a
// tenant with a tombstone. It looks at each message once (each is hidden
// while the sweep runs, then made visible again) and returns how many it
// deleted and kept. With a tenant (a sweep after a job of that tenant
// completed), it reads the records of that tenant's messages only, and
// keeps the others unread; "" reads every message's.
func (w *Sweeper) Sweep(ctx context.Context, tenant string) (deleted, kept int, err error) {
	// Each message is hidden for two seconds only, so that a sweep never
	// keeps messages from anyone else for long; the sweep stops when three
	// receives in a row bring nothing it has not seen.
	seen := map[string]bool{}
	erased := map[string]bool{} // tombstones read, one per tenant per pass
	unread := 0                 // other tenants' messages kept without a read
	deadline := w.now().Add(2 * time.Minute)
	for quiet := 0; quiet < 3 && w.now().Before(deadline); {
		msgs, err := w.DLQ.Receive(ctx, 10, sweepHide)
		if err != nil {
			return deleted, kept, err
		}
		fresh := false
		for _, m := range msgs {
			if seen[aws.ToString(m.MessageId)] {
				continue
			}
			seen[aws.ToString(m.MessageId)], fresh = true, true
			switch done, read := w.sweepOne(ctx, m, erased, tenant); {
			case done:
				deleted++
			case !read:
				unread++
				kept++
			default:
				kept++
			}
		}
		if fresh {
			quiet = 0
		} else {
			quiet++
		}
	}
	w.Log.InfoContext(ctx, "DLQ swept", "deleted", deleted, "kept", kept, "kept_unread", unread, "tenant_id", tenant)
	return deleted, kept, nil
}

// sweepOne handles one DLQ message (see Sweep) and reports whether it
// deleted it, and whether it read its record (not a message of another
// tenant than the sweep's); erased holds the tombstones read so far in the
// pass.
func (w *Sweeper) sweepOne(ctx context.Context, m sqstypes.Message, erased map[string]bool, tenant string) (deleted, read bool) {
	msg, derr := message.Decode(aws.ToString(m.Body))
	if derr != nil {
		return false, true
	}
	gone, gerr := w.erased(ctx, erased, msg.TenantID, false)
	if gerr != nil {
		return false, true
	}
	if gone {
		return w.dropErased(ctx, w.DLQ, m, msg), true
	}
	if tenant != "" && msg.TenantID != tenant {
		return false, false
	}
	deleted, _ = w.checkRecord(ctx, w.DLQ, m, msg, erased)
	return deleted, true
}

// checkRecord reads the record of message m of q (msg decoded), records a
// missed death, and deletes the message if it is stale; it reports whether
// it deleted it, and the record as it now is (zero when it could not be
// read).
func (w *Sweeper) checkRecord(ctx context.Context, q Queue, m sqstypes.Message, msg message.Message, erased map[string]bool) (bool, domain.Delivery) {
	d, gerr := w.Store.Delivery(ctx, msg.DeliveryID)
	if errors.Is(gerr, store.ErrNotFound) {
		// No record at all: every attempt stopped before it could write
		// one. The message is all there is; record it dead, from the
		// message, if there still is no record then.
		d, gerr = unrecorded(msg), nil
	}
	if gerr == nil && missedDeath(d, SentAt(m)) {
		// SQS moved it here after its last attempt, but the attempt was
		// never recorded (the function stopped first): record the death, so
		// the tenant sees and can replay it. Unless its tenant was
		// tombstoned since the pass read it (read again: an erasure that
		// began meanwhile must not find a record made after its own pass).
		var gone bool
		if gone, gerr = w.erased(ctx, erased, msg.TenantID, true); gerr == nil && gone {
			return w.dropErased(ctx, q, m, msg), domain.Delivery{}
		}
		if gerr == nil {
			d, gerr = w.recordMissedDeath(ctx, d, msg, aws.ToString(m.Body), SentAt(m))
		}
	}
	if gerr != nil {
		return false, domain.Delivery{}
	}
	return IsStale(d, SentAt(m)) && q.Delete(ctx, m) == nil, d
}

// dropErased deletes message m of q, of an erased tenant, logged by its ids
// only (never its payload), and reports whether it did.
func (w *Sweeper) dropErased(ctx context.Context, q Queue, m sqstypes.Message, msg message.Message) bool {
	if q.Delete(ctx, m) != nil {
		return false
	}
	w.Log.InfoContext(ctx, "deleted a DLQ message of an erased tenant", "tenant_id", msg.TenantID, "delivery_id", msg.DeliveryID)
	return true
}

// erased reports whether a tenant has a tombstone, read once per pass
// (cache) unless again, when a tombstone not found before is read anew.
func (w *Sweeper) erased(ctx context.Context, cache map[string]bool, tenantID string, again bool) (bool, error) {
	if gone, ok := cache[tenantID]; ok && (gone || !again) {
		return gone, nil
	}
	gone, err := w.Store.Erased(ctx, tenantID)
	if err != nil {
		w.Log.ErrorContext(ctx, "cannot read a tenant's tombstone; its DLQ message is kept", "tenant_id", tenantID, "error", err.Error())
		return false, err
	}
	cache[tenantID] = gone
	return gone, nil
}

// unrecorded is a delivery that has no record, as its message describes it:
// its ids, and no state.
func unrecorded(msg message.Message) domain.Delivery {
	return domain.Delivery{DeliveryID: msg.DeliveryID, TenantID: msg.TenantID, EndpointID: msg.EndpointID, EventID: msg.EventID, EventType: msg.EventType}
}

// missedDeath reports whether a DLQ message's delivery has no record, or is
// pending with no claim and no replay since the message was sent: nothing
// will ever move it, unless its death is recorded.
func missedDeath(d domain.Delivery, sent time.Time) bool {
	return (d.State == "" || d.State == domain.StatePending) && d.ReplayClaimedBy == "" && (d.ReplayedAt == nil || d.ReplayedAt.Before(sent))
}

// recordMissedDeath records the death of d, read as a missed one, on the
// record as it was read only (none, if it had none): a record made or
// changed since (a copy of the delivery attempted at that moment) is not
// overwritten but read again, and its death recorded only if it still is a
// missed one. It returns the record as it now is.
func (w *Sweeper) recordMissedDeath(ctx context.Context, d domain.Delivery, msg message.Message, body string, sent time.Time) (domain.Delivery, error) {
	for try := 0; try < 3; try++ {
		a := domain.Attempt{Number: d.Attempts + 1, At: w.now().UTC(), Error: "death_not_recorded"}
		err := w.Store.RecordAttemptIfUnchanged(ctx, d, a, domain.Outcome{State: domain.StateDead, DeadReason: domain.ReasonAttemptsExhausted, Message: body})
		if err == nil {
			w.Log.WarnContext(ctx, "recorded a death its attempt did not", "delivery_id", d.DeliveryID, "tenant_id", d.TenantID)
			if w.Deaths != nil {
				w.Deaths(ctx, d)
			}
			d.State = domain.StateDead
			return d, nil
		}
		if !errors.Is(err, store.ErrConflict) {
			w.Log.ErrorContext(ctx, "cannot record a missed death", "delivery_id", d.DeliveryID, "error", err.Error())
			return d, err
		}
		d, err = w.Store.Delivery(ctx, d.DeliveryID)
		if errors.Is(err, store.ErrNotFound) {
			d, err = unrecorded(msg), nil
		}
		if err != nil || !missedDeath(d, sent) {
			return d, err
		}
	}
	err := fmt.Errorf("record the death of delivery %s: %w", d.DeliveryID, store.ErrConflict)
	w.Log.ErrorContext(ctx, "cannot record a missed death", "delivery_id", d.DeliveryID, "error", err.Error())
	return d, err
}

// IsStale reports whether a DLQ message is an old copy of a delivery that was
// delivered or cancelled, or replayed after the message was sent.
func IsStale(d domain.Delivery, sent time.Time) bool {
	if d.State == domain.StateDelivered || d.State == domain.StateCancelled {
		return true
	}
	// replayed_at is set when a replay claims the delivery, before it sends
	// it: while the claim is not released, this copy may be the only one.
	return d.ReplayClaimedBy == "" && d.ReplayedAt != nil && sent.Before(*d.ReplayedAt)
}

// sweepHide is how long the sweep hides each message it reads: briefly, so
// that it never keeps messages from anyone else for long.
const sweepHide = 2 * time.Second
