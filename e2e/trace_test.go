//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/hookline/hookline/internal/trace"
	"github.com/stretchr/testify/require"
)

// spanLine is one span as a function's log holds it (package trace): a
// span line ("msg":"span"), a row of a line of spans ("msg":"spans":
// enqueue's fan-outs, deliver's delivered attempts), or deliver's line of
// a failed attempt, which stands for the attempt's span
// ("span":"deliver.attempt", its outcome, class, status and latency
// beside its ids).
type spanLine struct {
	Function   string         `json:"-"`
	Msg        string         `json:"msg"`
	TraceID    string         `json:"trace_id"`
	SpanID     string         `json:"span_id"`
	Parent     string         `json:"parent_span_id"`
	Name       string         `json:"name"`
	Start      time.Time      `json:"start"`
	DurationMS float64        `json:"duration_ms"`
	Attributes map[string]any `json:"attributes"`
	// An attempt line's.
	Span      string    `json:"span"`
	Time      time.Time `json:"time"`
	Outcome   string    `json:"outcome"`
	Class     string    `json:"class"`
	Status    float64   `json:"status"`
	LatencyMS float64   `json:"latency_ms"`
}

// parseSpans reads the spans a log line holds: those trace.ParseLine
// reads, or the one an attempt line stands for; none for another line.
func parseSpans(msg string) []spanLine {
	var s spanLine
	if json.Unmarshal([]byte(msg), &s) != nil {
		return nil
	}
	if s.Msg == "span" || s.Msg == "spans" {
		var out []spanLine
		for _, ls := range trace.ParseLine([]byte(msg)) {
			out = append(out, spanLine{Msg: s.Msg, TraceID: ls.TraceID, SpanID: ls.SpanID, Parent: ls.ParentSpanID, Name: ls.Name,
				Start: ls.Start, DurationMS: ls.DurationMS, Attributes: ls.Attributes})
		}
		return out
	}
	if s.Span == "" || s.SpanID == "" {
		return nil
	}
	// An attempt line: logged at the attempt's end.
	s.Name, s.DurationMS = s.Span, s.LatencyMS
	s.Start = s.Time.Add(-time.Duration(s.LatencyMS * float64(time.Millisecond)))
	s.Attributes = map[string]any{"msg": s.Msg, "outcome": s.Outcome, "class": s.Class, "status": s.Status}
	return []spanLine{s}
}

// logGroup is a function's log group (its LoggingConfig, else Lambda's
// default name).
func logGroup(t *testing.T, function string) string {
	t.Helper()
	cfg, err := env.lambda.GetFunctionConfiguration(context.Background(), &lambda.GetFunctionConfigurationInput{FunctionName: &function})
	require.NoError(t, err)
	if cfg.LoggingConfig != nil && aws.ToString(cfg.LoggingConfig.LogGroup) != "" {
		return aws.ToString(cfg.LoggingConfig.LogGroup)
	}
	return "/aws/lambda/" + function
}

// spansOf reads the span lines of traceID in the functions' log groups
// (name -> function name) written since since.
func spansOf(t *testing.T, functions map[string]string, traceID string, since time.Time) []spanLine {
	t.Helper()
	logs := cloudwatchlogs.NewFromConfig(env.cfg)
	var out []spanLine
	for name, fn := range functions {
		p := cloudwatchlogs.NewFilterLogEventsPaginator(logs, &cloudwatchlogs.FilterLogEventsInput{
			LogGroupName: aws.String(logGroup(t, fn)), StartTime: aws.Int64(since.Add(-time.Minute).UnixMilli()),
			FilterPattern: aws.String(`"` + traceID + `"`),
		})
		seen := map[string]bool{}
		for p.HasMorePages() {
			page, err := p.NextPage(context.Background())
			require.NoError(t, err)
			for _, e := range page.Events {
				for _, s := range parseSpans(aws.ToString(e.Message)) {
					if s.TraceID != traceID || seen[s.SpanID] {
						continue // another trace's, or another line of the same attempt
					}
					seen[s.SpanID] = true
					s.Function = name
					out = append(out, s)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// waitSpans polls until the functions' logs hold want spans of traceID
// (the local cloud writes a function's log when its invocation ends).
func waitSpans(t *testing.T, functions map[string]string, traceID string, since time.Time, want int) []spanLine {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := spansOf(t, functions, traceID, since)
		if len(got) >= want {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d span lines of trace %s in the functions' logs after 60 s, want %d: %+v", len(got), traceID, want, got)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// logTrace prints the trace hop by hop, for the closing note.
func logTrace(t *testing.T, title string, producer time.Time, spans []spanLine, rcv []received) {
	t.Helper()
	t.Logf("%s: trace %s", title, spans[0].TraceID)
	t.Logf("  %-8s %-16s %-16s %-16s %12s %10s  %s", "function", "span", "span_id", "parent_span_id", "+start_ms", "dur_ms", "attributes")
	t.Logf("  %-8s %-16s %-16s %-16s %12s %10s", "producer", "write", "", "", "0.0", "")
	for _, s := range spans {
		t.Logf("  %-8s %-16s %-16s %-16s %12.1f %10.3f  %v", s.Function, s.Name, s.SpanID, s.Parent, float64(s.Start.Sub(producer).Microseconds())/1000, s.DurationMS, s.Attributes)
	}
	for i, r := range rcv {
		t.Logf("  receiver request %d at +%.1f ms: traceparent %s", i+1, float64(r.At.Sub(producer).Microseconds())/1000, r.Header.Get("traceparent"))
	}
}

// byName is spans by name (several for deliver.attempt).
func byName(spans []spanLine) map[string][]spanLine {
	m := map[string][]spanLine{}
	for _, s := range spans {
		m[s.Name] = append(m[s.Name], s)
	}
	return m
}

// An event written to the outbox with the producer's traceparent keeps its
// trace id from the producer through enqueue's fan-out span and each
// attempt's span to the receiver's traceparent header: the first attempt
// fails (503), the retry delivers, each a span of its own, the receiver's
// parent id each attempt's span.
func TestTraceFromProducerToReceiver(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			w.WriteHeader(503)
			return
		}
		w.WriteHeader(200)
	})
	tn := newTenant(t, rcv.URL+"/hook")
	producer := trace.New(time.Now())
	producer.SpanID = [8]byte{0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6, 0x07, 0x18}
	ev := event(tn, fmt.Sprintf("evt_trace_given_%d", time.Now().UnixNano()), "order.created", `{"n":1}`)
	ev.TraceParent = producer.String()
	start := write(t, ev)
	got := rcv.waitFor(t, 2, 60*time.Second)

	fns := map[string]string{"enqueue": env.out.EnqueueFunctionName, "deliver": env.out.DeliverFunctionName}
	spans := waitSpans(t, fns, producer.TraceIDHex(), start, 3)
	logTrace(t, "outbox item with the producer's traceparent "+producer.String(), start, spans, got)
	names := byName(spans)
	require.Len(t, names["enqueue.fanout"], 1, "%+v", spans)
	fan := names["enqueue.fanout"][0]
	require.Equal(t, producer.SpanIDHex(), fan.Parent, "the fan-out is the producer's span's child")
	attempts := names["deliver.attempt"]
	require.Len(t, attempts, 2)
	for i, a := range attempts {
		require.Equal(t, fan.SpanID, a.Parent, "each attempt is the fan-out's child")
		rc, ok := trace.Parse(got[i].Header.Get("traceparent"))
		require.True(t, ok, "the receiver's traceparent %q", got[i].Header.Get("traceparent"))
		require.Equal(t, producer.TraceIDHex(), rc.TraceIDHex(), "the producer's trace id at the receiver")
		require.Equal(t, a.SpanID, rc.SpanIDHex(), "the receiver's parent is the attempt's span")
	}
	require.NotEqual(t, attempts[0].SpanID, attempts[1].SpanID, "each attempt a span of its own")
	require.Equal(t, "retry", attempts[0].Outcome)
	require.Equal(t, "http_5xx", attempts[0].Class)
	require.EqualValues(t, 503, attempts[0].Status)
	// The delivered attempt is a row of its batch's line of spans.
	require.Equal(t, "spans", attempts[1].Msg)
	require.EqualValues(t, 200, attempts[1].Attributes["status"])
	require.EqualValues(t, 2, attempts[1].Attributes["attempt"])
}

// An event published over HTTP without a traceparent gets a fresh trace
// (named in the answer), the same at the API's publish span, enqueue,
// deliver and the receiver; one written to the outbox without one gets
// the trace derived from its tenant and id, the same at every hop too.
func TestTraceStartedByHookline(t *testing.T) {
	t.Parallel()
	t.Run("published over HTTP", func(t *testing.T) {
		t.Parallel()
		_, key := apiTenant(t, "tracer")
		rcv := newReceiver(t, status(200))
		apiEndpoint(t, key, rcv.URL+"/hook", "order.*")
		start := time.Now()
		code, _, body := post(t, "/v1/events", key, `{"type":"order.created","payload":{"n":2}}`, "traceparent", "00-not-a-valid-trace-context-at-all-01")
		require.Equal(t, http.StatusAccepted, code, "%s", body)
		var view struct {
			TraceID string `json:"trace_id"`
		}
		require.NoError(t, json.Unmarshal(body, &view))
		require.Len(t, view.TraceID, 32, "%s", body)
		got := rcv.waitFor(t, 1, 60*time.Second)
		fns := map[string]string{"api": env.out.ApiFunctionName, "enqueue": env.out.EnqueueFunctionName, "deliver": env.out.DeliverFunctionName}
		spans := waitSpans(t, fns, view.TraceID, start, 3)
		logTrace(t, "POST /v1/events with a malformed traceparent (ignored: a fresh trace)", start, spans, got)
		names := byName(spans)
		require.Len(t, names["api.publish"], 1)
		require.Empty(t, names["api.publish"][0].Parent, "the publish is the trace's root")
		require.Equal(t, names["api.publish"][0].SpanID, names["enqueue.fanout"][0].Parent)
		require.Equal(t, names["enqueue.fanout"][0].SpanID, names["deliver.attempt"][0].Parent)
		rc, ok := trace.Parse(got[0].Header.Get("traceparent"))
		require.True(t, ok)
		require.Equal(t, view.TraceID, rc.TraceIDHex())
		require.Equal(t, names["deliver.attempt"][0].SpanID, rc.SpanIDHex())
	})
	t.Run("written to the outbox", func(t *testing.T) {
		t.Parallel()
		rcv := newReceiver(t, status(200))
		tn := newTenant(t, rcv.URL+"/hook")
		ev := event(tn, fmt.Sprintf("evt_trace_none_%d", time.Now().UnixNano()), "order.created", `{"n":3}`)
		start := write(t, ev)
		got := rcv.waitFor(t, 1, 60*time.Second)
		rc, ok := trace.Parse(got[0].Header.Get("traceparent"))
		require.True(t, ok, "a traceparent although the producer gave none")
		derived := trace.Derive(trace.EventKey(tn.ID, ev.ID), ev.OccurredAt)
		require.Equal(t, derived.TraceIDHex(), rc.TraceIDHex(), "the trace derived from the event")
		fns := map[string]string{"enqueue": env.out.EnqueueFunctionName, "deliver": env.out.DeliverFunctionName}
		spans := waitSpans(t, fns, rc.TraceIDHex(), start, 2)
		logTrace(t, "outbox item without a traceparent (derived trace)", start, spans, got)
		names := byName(spans)
		require.Empty(t, names["enqueue.fanout"][0].Parent, "enqueue's fan-out is the root")
		require.Equal(t, names["enqueue.fanout"][0].SpanID, names["deliver.attempt"][0].Parent)
		require.Equal(t, names["deliver.attempt"][0].SpanID, rc.SpanIDHex())
	})
}
