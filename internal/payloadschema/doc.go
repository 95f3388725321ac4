// Package payloadschema validates event payloads against the JSON Schema
// of their type in the stack's event-type catalog (package eventtypes):
// Check compiles every schema and validates every example at synth; a
// Validator (enqueue's) compiles each type's schema the first time a
// payload of that type arrives, once per instance, and validates the
// payloads of the types whose validation is warn or reject.
//
// It is apart from package eventtypes because the JSON Schema library
// (github.com/santhosh-tekuri/jsonschema/v6) compiles every draft's
// metaschema when its package initialises, about 3 ms of every cold start
// of a function that links it: only enqueue (and infra, at synth) do; the
// api function reads the catalog without it.
//
// Guarantees:
//   - a schema refers only to itself: no document is ever loaded (a $ref
//     to another is refused by Check);
//   - a type the catalog does not know, or whose validation is off, costs
//     one map lookup;
//   - a Mismatch names the payload's violated path (a JSON pointer) and the
//     schema's keyword, bounded (MaxDetailBytes), never the payload's
//     values.
package payloadschema
