// Package cost turns measured workload figures into the AWS cost of a
// million webhook deliveries.
//
// It is arithmetic only: no AWS call, no clock. Prices holds dated unit
// prices, each with the address it was read from (Default is us-east-1);
// Inputs holds what one delivery costs in billed units (Lambda invocations
// and milliseconds, SQS requests, DynamoDB request units per call, stored,
// logged and sent bytes); Estimate multiplies the two and returns a
// Breakdown per service. Initial builds Inputs from the assumptions made
// before measurement, following the calls internal/enqueue and
// internal/deliver make today; each assumption is meant to be replaced by a
// measured figure.
//
// The cost is hookline's own: the producer's outbox write is reported apart
// (Breakdown.ProducerOutbox) and left out of the total. Free tiers are left
// out (the figure is the marginal cost of a million deliveries), and so are
// costs that do not grow with deliveries: custom metrics (billed per metric
// per month), alarms, the dashboard, the event source mapping's empty
// receives on an idle queue and the scheduled DLQ sweep. README.md beside
// this file has the price table, the formula, the estimate and how it
// changed.
package cost
