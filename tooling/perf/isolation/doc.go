// Package isolation measures how much one tenant's troubled endpoint delays
// another tenant's deliveries on the deployed stack (docs/performance.md,
// "Isolation"; DESIGN.md's isolation principle).
//
// A quiet tenant B, with its own healthy endpoint (a loopback receiver that
// answers at once), writes a paced stream of events; its outbox-write-to-
// POST-received latency (measured as pipeline.Latency measures it: from
// just before the write to the request's arrival) is taken in situations
// run one after the other in the same run:
//
//   - alone: B's events only (the baseline);
//   - slow: beside a tenant A whose endpoint answers 200 after a delay just
//     under the request timeout, with a backlog written just before B's
//     events;
//   - hanging: beside a tenant A' whose endpoint holds each request past the
//     request timeout (until the client goes), with the same backlog.
//
// Each situation uses fresh tenants and endpoints, and waits (bounded) until
// the noisy tenant's backlog is drained, every delivery of it delivered or
// dead, before the next one starts; a backlog still draining at the bound is
// cut short by deleting its endpoint (its remaining deliveries then go dead,
// endpoint_not_found) so that it does not weigh on the next situation. The
// package reports figures; it asserts nothing. Receivers bind 127.0.0.1 only.
package isolation
