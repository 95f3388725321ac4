// Package eventtypes is the stack's event-type catalog: the event types an
// operator declares (name, description, a JSON Schema of the payload, an
// example, deprecated or not, and a validation mode), what tenants read
// (GET /v1/event-types, the console) and subscribe to, and what enqueue
// checks payloads against.
//
// The catalog is optional. The operator declares it in the CDK app
// (hookline.Props.EventTypes, or a directory of JSON files, one a type:
// LoadDir); infra checks it whole at synth (Catalog.Check: each schema
// compiles as JSON Schema draft 2020-12, each example validates against
// its own schema) and bundles it as FileName beside the bootstrap of the
// enqueue and api functions, which read it once at start (Open). No
// catalog: no file, and everything behaves as without this package.
//
// Guarantees:
//   - each schema is compiled at most once per instance, the first time a
//     payload of its type is validated (a catalog of many types costs a
//     cold start nothing), and never fetched: a schema refers only to
//     itself ($ref to another document is refused at synth);
//   - a payload is validated only when its type is in the catalog with
//     validation warn or reject; off, or a type the catalog does not know,
//     costs one map lookup;
//   - a mismatch names the payload's violated path (a JSON pointer) and
//     the schema's keyword, bounded (MaxDetailBytes), never the payload.
package eventtypes
