// Package selection picks a tenant's deliveries over a time range without
// a scan, for the jobs that act on them (a replay since a time, the cancel
// of an endpoint's pending deliveries): the events in the range come from
// the message log's index (messagelog.Reader.ListEvents: type,
// occurred_at and endpoint_id projected), a page at a time; a delivery's
// id derives from its event's and its endpoint's (domain.DeliveryID), so
// each page's events x the tenant's endpoints (or the one asked for) name
// the candidate deliveries, read with one BatchGetItem per 100
// (store.Store.Load). A candidate carries its record when it has one.
//
// Guarantees:
//   - Tenant isolation: events come from the tenant's partition of the
//     index, endpoints from the tenant's own, and a record whose tenant is
//     another's is reported as no record.
//   - A page reads at most MaxPageEvents events (MaxEvents a listing) and
//     about as many candidates as a step asked for (at least one event's;
//     at most MaxEvents x the tenant's endpoints over), so a job's step is
//     bounded whatever the range.
//   - An event addressed to one endpoint (endpoint_id) is a candidate of
//     that endpoint alone.
package selection
