// Package payloadschema validates event payloads against the JSON Schema
// of their type in the stack's event-type catalog (package eventtypes):
// Check compiles every schema and validates every example at synth; a
// Validator (enqueue's) compiles each type's schema the first time a
// payload of that type arrives, once per instance, and validates the
// payloads of the types whose validation is warn or reject.
//
// It is apart from package eventtypes so that only enqueue (and infra, at
// synth) link the JSON Schema library (github.com/kaptinlin/jsonschema):
// the api function reads the catalog without it. The library was chosen
// for a function's cold start: it compiles nothing when its package
// initialises (the first one tried, santhosh-tekuri/jsonschema v6,
// compiled every draft's metaschema there, 3 to 7 ms of every start), and
// it reports where in the payload each violation is. It does not check a
// schema against its metaschema when compiling it, so Check does, with
// draft 2020-12's metaschemas embedded here (no document is fetched).
//
// Guarantees:
//   - a schema refers only to itself: no document is ever fetched (a $ref
//     to another, or one that resolves to nothing, is refused by Check and
//     by the compiler a function uses: the library would let every payload
//     through it);
//   - a schema Check passes conforms to its draft's metaschema (2020-12
//     unless its $schema names draft 7, 6 or 4);
//   - a type the catalog does not know, or whose validation is off, costs
//     one map lookup;
//   - a Mismatch names the payload's violated path (a JSON pointer) and the
//     schema's keyword, bounded (MaxDetailBytes), never the payload's
//     values.
package payloadschema
