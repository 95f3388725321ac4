package enqueue

import (
	"cmp"
	"context"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/filter"
	"github.com/hookline/hookline/internal/message"
)

// The defaults of Config, each written once.
const (
	// DefaultSendConcurrency is Config.SendConcurrency when not set.
	DefaultSendConcurrency = domain.DefaultEnqueueSendConcurrency
	// DefaultLaneAfter is Config.LaneAfter when not set: 60, what a
	// tenant's share of deliver's invocations holds at once (its
	// domain.DefaultTenantConcurrency of 6, a batch of 10 each). deliver
	// moves any more of the tenant's messages it receives at once to the
	// lane (a receive, a send and a delete each), and their batches hold
	// delivery-queue invocations every other tenant's messages wait for:
	// at 100, a wide tenant's burst took all ten of the local cloud's for
	// a second (docs/performance.md). A message to an endpoint shown fast
	// needs no slot of the tenant's, so a healthy tenant's rest is not
	// slowed by the lane.
	DefaultLaneAfter = domain.DefaultTenantConcurrency * message.MaxBatchEntries
	// DefaultInlineWork is Config.InlineWork when not set: 16 filters'
	// fixed budget (filter.WorkBase), about 1 million units, 3 to 5 ms of
	// one core: what one tenant's filters may spend of a stream batch's
	// time before its records are deferred.
	DefaultInlineWork = 16 * filter.WorkBase
	// DefaultPutTries is how many times an invocation puts an operational
	// event on the operator's bus before it parks it (Config.PutTries).
	DefaultPutTries = 3
	// DefaultPutBackoff is the pause before the second put of the events
	// that failed; each later pause is twice the one before
	// (Config.PutBackoff): 100 ms, then 200 ms, so that three tries take
	// well under a second of the invocation.
	DefaultPutBackoff = 100 * time.Millisecond
)

// Config is how the handler runs: where it sends and how hard it tries.
// Every field's zero value means its default; WithDefaults fills them in,
// and the handler applies it once, at its first Handle (a change after
// that is not seen).
type Config struct {
	// QueueURL is the delivery queue.
	QueueURL string
	// LaneQueueURL is the tenant lane: the queue, with its own mapping to
	// deliver, that takes a tenant's messages past LaneAfter in one
	// invocation, so that one tenant's large fan-out does not queue ahead
	// of every other tenant's deliveries (docs/architecture.md, "The
	// tenant lane"). Empty: every message goes to QueueURL.
	LaneQueueURL string
	// FanOutQueueURL is the deferred fan-out queue, which enqueue also
	// consumes (Handler.HandleFanOut): the part of a tenant's fan-out past
	// its share of an invocation (LaneAfter messages, InlineWork of filter
	// matching) leaves the stream's batch as one message a record there,
	// fanned out later, off the stream, to the tenant lane. Empty: every
	// record is fanned out inline.
	FanOutQueueURL string
	// InlineWork is the filter matching one tenant's records may spend in
	// one stream invocation (filter work units) before the rest of its
	// records' fan-out is deferred. Default DefaultInlineWork.
	InlineWork int
	// LaneAfter is how many of one tenant's messages an invocation sends
	// to the delivery queue before the rest go to the lane. Default
	// DefaultLaneAfter (60).
	LaneAfter int
	// SendConcurrency is how many SendMessageBatch requests to the delivery
	// queue are in flight at once. Default DefaultSendConcurrency (4); 1
	// sends one after the other.
	SendConcurrency int
	// BusName is the operator's bus that Handler.Bus puts the operational
	// events on.
	BusName string
	// ParkQueueURL is the enqueue failure queue, where operational events
	// the bus kept refusing are parked (through Handler.Queue), for make
	// reprocess-enqueue to put again. Empty: such events fail the invocation
	// instead, and the stream retries the batch (the production wiring
	// always sets it).
	ParkQueueURL string
	// PutTries is how many times an operational event is put before it is
	// parked. Default DefaultPutTries (3).
	PutTries int
	// PutBackoff is the pause before the second try, doubled before each
	// later one. Default DefaultPutBackoff (100 ms).
	PutBackoff time.Duration
	// Sleep pauses between tries, or until ctx is done. Default: a timer
	// that honours ctx.
	Sleep func(ctx context.Context, d time.Duration) error
}

// WithDefaults returns c with every field not set given its default.
func (c Config) WithDefaults() Config {
	c.SendConcurrency = cmp.Or(max(c.SendConcurrency, 0), DefaultSendConcurrency)
	c.LaneAfter = cmp.Or(max(c.LaneAfter, 0), DefaultLaneAfter)
	c.InlineWork = cmp.Or(max(c.InlineWork, 0), DefaultInlineWork)
	c.PutTries = cmp.Or(max(c.PutTries, 0), DefaultPutTries)
	c.PutBackoff = cmp.Or(max(c.PutBackoff, 0), DefaultPutBackoff)
	if c.Sleep == nil {
		c.Sleep = sleep
	}

	return c
}

// sleep pauses for d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
