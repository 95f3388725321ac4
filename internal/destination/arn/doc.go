// Package arn parses and checks the ARNs of an AWS destination: its target
// (the customer's SQS queue, SNS topic or EventBridge event bus) and the
// role hookline assumes in the customer's account. The api function checks
// them at registration, package destination again before each attempt.
//
// Guarantees:
//   - ParseTarget accepts only the ARN form of the endpoint type's service
//     (sqs, sns, events), with an AWS partition, a region name, a 12-digit
//     account and the service's name rules for the resource; a FIFO queue
//     or topic is refused (ErrFIFO). ParseRole accepts only an iam role ARN
//     without a region, with IAM's rules for the path and the name.
//   - Every refusal is an error whose message names the part that is wrong
//     and the form wanted, fit to be shown to the customer.
//   - No ARN longer than 2048 bytes is read, and no pattern is a counted
//     repetition: a name's length is checked as a length. The patterns
//     are compiled on their first use, not at init, so a cold start that
//     checks no ARN does not pay for them.
//   - The package links no AWS SDK service package: the api function
//     imports it, and each service package's init is paid at every cold
//     start of a function that links it (docs/performance.md, "Cold
//     start"; functions/deps_test.go holds it).
package arn
