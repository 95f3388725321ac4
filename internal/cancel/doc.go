// Package cancel runs a tenant's cancel of the pending deliveries of one of
// its endpoints (a domain.KindCancel job; Canceller.Step is its
// jobs.StepFunc): page by page of the events its range selects
// (package selection), each delivery of the endpoint that is pending, or
// has no record yet while the event went to the endpoint, is marked
// cancelled (store.Store.CancelDelivery), and deliver drops its message
// unsent when it comes (package deliver).
//
// Guarantees:
//   - Only the job's tenant's deliveries of the job's endpoint are touched.
//   - A cancel is one conditional write per delivery: an attempt that
//     records the delivery delivered or dead first wins (counted
//     not_pending), and one under way when the cancel lands leaves it
//     cancelled.
//   - A delivery without a record (its message queued, never attempted:
//     held by the endpoint's breaker, say) is cancelled when its event went
//     to the endpoint: addressed to it, or of a type it takes and, if the
//     endpoint has a payload filter, matched by it (its payload read from
//     the outbox item). Where that cannot be told it is left alone and
//     counted (not_routed).
//   - A step that stops anywhere is run again from its page: what it
//     cancelled already is recognised as the job's own (cancelled_by) and
//     counted once.
//   - A cancelled delivery stays listed (the job's cancelled_ids, the
//     first MaxCancelledIDs) and can be replayed by a replay since a
//     time (domain.KindSince), whose message deliver attempts.
package cancel
