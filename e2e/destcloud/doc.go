// Package destcloud holds the end-to-end tests of the AWS destinations'
// sender (package destination) on the local cloud, with no stack deployed
// (build tag e2e): it makes a customer's queue, topic, bus and role there
// and calls destination.Sender directly, reading what arrives as the
// customer's consumers would, and records what the local cloud forgives
// that AWS (and the unit tests' fakes) refuse.
package destcloud
