// Package store keeps hookline's state in one DynamoDB table: endpoints,
// deliveries with their attempt log, and rejected outbox items.
//
// Keys (pk / sk):
//
//	endpoint          TENANT#<tenant> / ENDPOINT#<endpoint>
//	delivery          DELIVERY#<delivery id> / DELIVERY
//	rejected item     REJECTED#<event id or stream sequence> / REJECTED
//
// The sparse index gsi1 lists a tenant's dead deliveries
// (gsi1pk TENANT#<tenant>#DEAD, gsi1sk <dead_at>#<delivery id>) and rejected
// items (TENANT#<tenant>#REJECTED). Creating a delivery is a conditional put,
// so the same stream record processed twice creates it once; a delivery that
// was created but whose message was not yet sent (enqueued_at unset) is sent
// again, so a crash between the two loses nothing.
package store
