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
	// DefaultMaxEndpoints is how many endpoints one tenant may have: 100.
	// Stripe allows 16 per account and mode, GitHub 20 webhooks per event
	// on a repository or organisation; 100 is generous beside them and
	// bounds what enqueue, the event routing, JWKS and a replay step read
	// of a tenant (at most 100 endpoint items) and how many deliveries
	// one event fans out into (docs/configuration.md).
	DefaultMaxEndpoints = 100
	// DefaultMaxEndpointBytes bounds an endpoint's own size: the bytes of
	// what the tenant writes into it (URL, description, event types,
	// header names and values, filter, target and role), 16 KiB. Each
	// field has its own cap (2 KiB URL, 20 headers of 1 KiB, 50 types of
	// 128 bytes, a 4 KiB filter) and together they reach about 35 KiB;
	// 16 KiB keeps any one of them whole (20 full headers fill 20 KiB, so
	// not all twenty at once) and halves the worst endpoint item enqueue
	// reads.
	DefaultMaxEndpointBytes = 16 << 10
	// DefaultMaxMetricsEventTypes is how many event types
	// GET /v1/metrics/attempts?group_by=event_type answers at most: the
	// types with the most attempts, the rest summed into one "other"
	// group.
	DefaultMaxMetricsEventTypes = 50
)
