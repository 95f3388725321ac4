package domain

import "time"

// The defaults that more than one configuration applies (the construct's
// Props, the functions' environment, the handlers' own zero values, the
// tooling), each written here once; every other place names the constant.
// internal/codeshape fails when a default is spelled twice.
const (
	// DefaultRequestTimeout bounds one delivery attempt, from dial to the
	// end of the response's excerpt.
	DefaultRequestTimeout = 15 * time.Second
	// DefaultFailingAfter consecutive failed attempts mark an endpoint
	// failing (endpoint.failing) and open its circuit breaker.
	DefaultFailingAfter = 10
	// DefaultDisableAfter consecutive failed attempts disable an endpoint,
	// once the run has also lasted DefaultDisableAfterFor.
	DefaultDisableAfter = 50
	// DefaultDeadWindow is the coalescing window of delivery.dead.
	DefaultDeadWindow = 5 * time.Minute
	// DefaultReplayRate is the sends per second of one replay job.
	DefaultReplayRate = 10.0
	// DefaultTracingSampleRate is the share of traces whose spans are sent
	// to X-Ray when tracing is on: X-Ray's default sampling rule's rate.
	DefaultTracingSampleRate = 0.05
	// DefaultDeliveryRetention is how long a delivery record is kept.
	DefaultDeliveryRetention = 15 * 24 * time.Hour
	// DefaultPayloadRetention is how long after its occurred_at an event's
	// payload is served by the API: a day less than the outbox items'
	// physical expiry (outbox.DefaultRetention, 16 days).
	DefaultPayloadRetention = 15 * 24 * time.Hour
	// DefaultDeliverMaxConcurrency is the deliver event source mapping's
	// maximum concurrency: also how many deliver invocations may send to
	// an endpoint that answers fast. 25 batches of 10 at receivers
	// answering in 200 ms, with about 20 ms of deliver's own work a batch,
	// are about 1,100 deliveries a second (docs/capacity.md).
	DefaultDeliverMaxConcurrency = 25
	// DefaultEnqueueSendConcurrency is how many SendMessageBatch requests
	// one enqueue invocation has in flight at once (docs/capacity.md).
	DefaultEnqueueSendConcurrency = 4
	// DefaultEndpointCacheTTL is how long a deliver instance keeps an
	// endpoint's record and its tenant's tombstone, read eventually
	// consistent, before it reads them again: with DynamoDB's replication
	// lag (usually well under a second), what a batch sends by is at most
	// about 2 s old (see package deliver's "Endpoint reads").
	DefaultEndpointCacheTTL = time.Second
	// DefaultEndpointCacheSize is how many endpoints a deliver instance
	// keeps at most; beyond, the oldest kept is dropped (an endpoint's
	// record is a few KB at most: some MB in all).
	DefaultEndpointCacheSize = 4096
)
