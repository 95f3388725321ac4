// Package trace carries a W3C trace context (the traceparent header) with
// every event, from the producer to the receiver, and emits the spans of
// hookline's own work in that trace.
//
// # Propagation
//
// The producer gives a traceparent (the outbox item's traceparent
// attribute, or the traceparent header of POST /v1/events), or hookline
// starts the trace: the API with New, enqueue with Derive (from the
// tenant and event id, so that every later hop that finds no context
// derives the same trace id). It travels in the delivery message's body
// (message.Message.TraceParent, the durable copy every re-send, DLQ copy,
// replay and redrive keeps) and as the delivery queue message's
// traceparent attribute, and each attempt sends it to the receiver as the
// traceparent header (an AWS destination: the attribute, or the
// EventBridge detail's field), each attempt with a span id of its own
// under the same trace id.
//
// # Spans
//
// A span is emitted in two ways, neither needing a collector of ours:
//
//   - always, as a JSON log line of the function ("msg":"span", trace_id,
//     span_id, parent_span_id, name, service, start, duration_ms,
//     attributes), so that CloudWatch Logs Insights follows one trace_id
//     across the four functions' log groups (docs/operations.md). Spans
//     that end together share one line (Rows, "msg":"spans": a row of
//     ids, start, duration and values per span, about 150 bytes where a
//     line of its own is 330 to 490): enqueue's fan-outs, one line per
//     invocation, and deliver's delivered attempts, one line per batch
//     (issue 37: a delivery's log bytes 940 -> 490). A failed attempt's
//     span is deliver's own line for the attempt (Span.LineFields: span,
//     span_id, parent_span_id beside the attempt's outcome, class, status
//     and latency), so that it costs one line in CloudWatch Logs, not
//     two. ParseLine reads a span line and a line of rows alike;
//   - with the construct's Tracing prop (X-Ray active tracing), also as an
//     X-Ray segment sent over UDP to the daemon Lambda runs beside the
//     function (AWS_XRAY_DAEMON_ADDRESS), in the event's trace mapped to
//     X-Ray's form (XRayTraceID), when the trace is sampled. Segments,
//     not subsegments of the invocation's segment: Lambda's own segment
//     is in a trace of its own per invocation, and only segments in the
//     event's trace join the four functions' spans into one X-Ray trace.
//     X-Ray rejects a trace id whose first 32 bits are not a recent time
//     (over 30 days old): a producer's W3C id (random bits there) or an
//     event's derived trace whose occurred_at is far from now goes under
//     a derived X-Ray id instead (XRayTraceIDAt: the day's start, the W3C
//     id's last 24 hex digits) with the W3C id as an annotation
//     (XRayW3CAnnotation), so every segment sent is one X-Ray accepts.
//     Of a share of the traces only (the TracingSampleRate prop, default
//     5%, X-Ray's own default rule's rate; InSample decides from the
//     trace id, so X-Ray holds all of a trace's spans or none): X-Ray
//     charges $5 a million traces recorded, twice what hookline itself
//     costs a million deliveries, and each segment is a datagram sent on
//     the attempt's path (docs/performance.md). The span lines stay on
//     for every trace.
//
// OpenTelemetry's OTLP export is not built in: it needs a collector the
// user runs and the OpenTelemetry SDK in every function binary (several
// MB and a slower cold start), while the log lines and X-Ray reach the
// same trace on Lambda with the standard library alone.
//
// # Guarantees
//
//   - A traceparent that is malformed, of version ff, uppercase, or with an
//     all-zero id is ignored and a new trace started (Parse, Or): never an
//     error, a rejection or a failed delivery.
//   - Every span of one event's delivery has the event's trace id; each
//     attempt's span is new, its parent the span of the hop that sent the
//     message (enqueue's fan-out, a replay's send).
//   - Emitting a span never blocks on the network and never fails the
//     work it describes: the X-Ray datagram is fire and forget.
//   - A span line or row carries ids, counts, outcomes and latencies, never a
//     secret or a payload.
package trace
