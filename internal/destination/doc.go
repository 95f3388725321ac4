// Package destination delivers one attempt to an AWS destination of the
// customer's: a message on their SQS queue, a message published to their
// SNS topic or an entry put on their EventBridge bus, reached by assuming a
// role in their account (sts:AssumeRole with the endpoint's external ID, as
// a session named for the endpoint, SessionName, so that the customer's
// CloudTrail tells endpoints apart), never with stored keys.
//
// What it guarantees, as package sender does for HTTP: one call per attempt,
// the delivery id as webhook-id on every attempt, the Standard Webhooks
// signature of the exact body carried beside it (as message attributes, or
// in the EventBridge entry's detail), and a sender.Result that classifies
// the answer as delivered, retry or dead with a domain.DeadReason
// (docs/destinations.md has the table). The role's credentials are cached
// per warm instance until shortly before they expire and are never stored
// or logged; a refused role is remembered briefly so that a burst of
// deliveries does not hammer STS.
//
// Each attempt's target and role ARNs are checked first (package
// destination/arn, which the api function also uses at registration).
package destination
