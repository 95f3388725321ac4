// Package eventtypes is the stack's event-type catalog: the event types an
// operator declares (name, description, a JSON Schema of the payload, an
// example, deprecated or not, and a validation mode), what tenants read
// (GET /v1/event-types, the console) and subscribe to, and what enqueue
// checks payloads against.
//
// The catalog is optional. The operator declares it in the CDK app
// (hookline.Props.EventTypes, or a directory of JSON files, one a type:
// LoadDir); infra checks it whole at synth (New here; package
// payloadschema's Check: each schema compiles as JSON Schema draft
// 2020-12, each example validates against its own) and bundles it as
// FileName beside the bootstrap of the enqueue and api functions, which
// read it once at start (Open). No catalog: no file, and everything
// behaves as without this package.
//
// This package links no JSON Schema library: validating payloads is
// package payloadschema's, which only enqueue links (and infra).
package eventtypes
