// Package opevent writes hookline's operational events (domain.OpEventTypes:
// endpoint.disabled, endpoint.failing, endpoint.recovered, delivery.dead)
// into the outbox table, so that they reach the tenant through the same
// stream, enqueue and deliver as the tenant's own events: signed, retried,
// dead-lettered and replayable like any event.
//
// Guarantees:
//   - One event per emission, however often it is retried: the event id is
//     derived from what the event is about (ID: its type, tenant, endpoint
//     and episode, or its coalescing window), and the put carries
//     attribute_not_exists(id).
//   - Every item written here carries AttrOrigin = Origin. enqueue rejects
//     an item of a reserved type without it (a producer's), so every
//     operational event delivered was written by hookline.
//   - enqueue fans an operational event out only to the tenant's endpoints
//     that name its type (domain.Endpoint.SubscribesExplicitly) and are
//     enabled: never to an endpoint without a filter, never to a disabled
//     one (so never to the disabled endpoint it describes).
//
// TestItem builds the other event hookline writes into the outbox with the
// marker: hookline.test (domain.TestEventType), the test event of POST
// /v1/endpoints/{id}/test, addressed to one endpoint (endpoint_id), which
// enqueue sends to that endpoint only and never to the operator's bus.
//
// delivery.dead is coalesced per endpoint per window (Window): each death
// of a delivery of a non-operational event is added to the window's record
// in the state table; the death that opens the window sends a DeadNotice,
// delayed until the window ends (at most 15 minutes, SQS's largest delay),
// to the replay worker's operations queue, which writes one delivery.dead
// summary for the window. An endpoint's deaths thus raise at most one
// delivery.dead per window: 10,000 deaths in an hour at the default 5-minute
// window are at most 12 notifications.
//
// Loops: a delivery of an operational event that dies raises no
// delivery.dead; its failed attempts count toward its endpoint's health
// like any other, but endpoint.failing, endpoint.disabled and
// endpoint.recovered are raised once per episode (conditional writes on the
// endpoint's record decide), so no operational event begets another without
// end.
package opevent
