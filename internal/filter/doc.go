// Package filter is an endpoint's payload filter: a subset of Amazon
// EventBridge event patterns, applied to an event's data (its payload).
// Parse validates a filter's JSON text, with errors that name the path of
// the problem (filter.amount[0]: ...) and the limit it breaks (MaxBytes,
// MaxDepth, MaxValues); Filter.Match says whether a JSON document matches.
//
// The subset, with EventBridge's semantics (docs/filters.md lists it with
// examples and the EventBridge pages it follows):
//   - a field's value is a non-empty array of conditions, any of which may
//     match (OR), and every field must match (AND); a nested object is a
//     pattern on the nested object;
//   - exact values: strings, numbers (compared as numbers to six decimal
//     places within ±5e9, as EventBridge's Event Ruler does, and by their
//     text otherwise), true, false, null;
//   - {"prefix": s}, {"suffix": s}, each also {"prefix": {"equals-ignore-case": s}};
//     {"equals-ignore-case": s};
//   - {"anything-but": v} with v a string, a number, a list of strings or of
//     numbers, or {"prefix": s}, {"suffix": s}, {"equals-ignore-case": s};
//   - {"numeric": [op, n]} and {"numeric": [">" or ">=", lo, "<" or "<=", hi]};
//   - {"exists": true|false}, on leaves: an object, an empty array or a
//     missing key is not a leaf, null is;
//   - "$or": [pattern, pattern, ...] (two or more) beside the fields;
//   - an array in the event matches when any element does, and a nested
//     pattern matches within one element of an array of objects.
//
// Match reads only the parts of the document a filter names: it skips
// every other value without decoding it, and allocates nothing for
// documents whose matched strings have no escapes. It never panics, on any
// input; a document that is not a JSON object matches only a filter that
// holds nothing but exists: false conditions.
package filter
