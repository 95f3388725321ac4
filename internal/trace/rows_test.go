package trace

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rowsLine is a Rows line as a reader of the log decodes it.
type rowsLine struct {
	Msg     string   `json:"msg"`
	Name    string   `json:"name"`
	Service string   `json:"service"`
	Start   string   `json:"start"`
	Columns []string `json:"columns"`
	Spans   [][]any  `json:"spans"`
}

// Spans ended together make one line whose rows are each span's ids, its
// start after the line's, its duration and its attributes' values.
func TestRowsLine(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	clock := time.Unix(1_800_000_000, 0)
	tr := &Tracer{Service: "enqueue", Out: &buf, Now: func() time.Time { return clock }}
	parent, _ := Parse(valid)
	rows := tr.Rows("enqueue.fanout")
	a := tr.Start(parent, "enqueue.fanout")
	clock = clock.Add(2500 * time.Microsecond)
	b := tr.Start(Derive("k", clock), "enqueue.fanout") // a root
	rows.Add(a, 3100*time.Microsecond, slog.String("tenant_id", "acme"), slog.String("event_id", `evt_"1"`), slog.Int("deliveries", 2))
	rows.Add(b, time.Millisecond, slog.String("tenant_id", "acme"), slog.String("event_id", "evt_2"), slog.Int("deliveries", 0))
	require.Zero(t, buf.Len(), "nothing written before Flush")
	rows.Flush()
	rows.Flush() // nothing more
	require.Equal(t, 1, strings.Count(buf.String(), "\n"), "one line")

	var line rowsLine
	require.NoError(t, json.Unmarshal(buf.Bytes(), &line))
	require.Equal(t, rowsLine{Msg: "spans", Name: "enqueue.fanout", Service: "enqueue", Start: "2027-01-15T08:00:00Z", Columns: []string{"tenant_id", "event_id", "deliveries"}, Spans: [][]any{
		{parent.TraceIDHex(), a.Context().SpanIDHex(), parent.SpanIDHex(), 0.0, 3.1, "acme", `evt_"1"`, 2.0},
		{b.Context().TraceIDHex(), b.Context().SpanIDHex(), "", 2.5, 1.0, "acme", "evt_2", 0.0},
	}}, line)
	// Read back, each row is the span a line of its own would have been.
	start := time.Unix(1_800_000_000, 0).UTC()
	require.Equal(t, []LineSpan{
		{TraceID: parent.TraceIDHex(), SpanID: a.Context().SpanIDHex(), ParentSpanID: parent.SpanIDHex(), Name: "enqueue.fanout", Service: "enqueue",
			Start: start, DurationMS: 3.1, Attributes: map[string]any{"tenant_id": "acme", "event_id": `evt_"1"`, "deliveries": 2.0}},
		{TraceID: b.Context().TraceIDHex(), SpanID: b.Context().SpanIDHex(), Name: "enqueue.fanout", Service: "enqueue",
			Start: start.Add(2500 * time.Microsecond), DurationMS: 1, Attributes: map[string]any{"tenant_id": "acme", "event_id": "evt_2", "deliveries": 0.0}},
	}, ParseLine(bytes.TrimSpace(buf.Bytes())))
	// The trace id is a term of the line, as CloudWatch Logs' filter
	// patterns and Logs Insights' "like" find it.
	require.Contains(t, buf.String(), `"`+parent.TraceIDHex()+`"`)

	// Nil rows, or a nil tracer's, write nothing and do not panic.
	var nilTracer *Tracer
	nilTracer.Rows("x").Add(nilTracer.Start(parent, "x"), time.Millisecond)
	nilTracer.Rows("x").Flush()
}

// However many spans are added, no line passes MaxRowsLine by more than a
// row, so none reaches CloudWatch Logs' 256 KiB event, and every row is
// in exactly one line; concurrent adds are safe.
func TestRowsLinesAreBounded(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	tr := &Tracer{Service: "deliver", Out: &buf}
	rows := tr.Rows("deliver.attempt")
	long := strings.Repeat("x", 1000) // a long id, attacker-sized
	const n = 1000
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			rows.Add(tr.Start(New(time.Now()), "deliver.attempt"), time.Millisecond, slog.String("delivery_id", long), slog.Int("i", i))
		})
	}
	wg.Wait()
	rows.Flush()
	seen := map[float64]bool{}
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<20)
	lines := 0
	for sc.Scan() {
		lines++
		require.Less(t, len(sc.Bytes()), 256<<10, "a CloudWatch Logs event")
		require.Less(t, len(sc.Bytes()), MaxRowsLine+2048)
		var line rowsLine
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
		for _, r := range line.Spans {
			require.Len(t, r, 7)
			require.Equal(t, []string{"delivery_id", "i"}, line.Columns)
			require.False(t, seen[r[6].(float64)], "row %v twice", r[6])
			seen[r[6].(float64)] = true
		}
	}
	require.Len(t, seen, n)
	require.Greater(t, lines, 10, "split into lines of at most %d bytes", MaxRowsLine)
}

// ParseLine reads a span line as one span and any other line as none.
func TestParseLineReadsASpanLine(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	clock := time.Unix(1_800_000_000, 0)
	tr := &Tracer{Service: "api", Out: &buf, Now: func() time.Time { return clock }}
	s := tr.Start(Context{}, "api.publish")
	clock = clock.Add(time.Millisecond)
	s.End(context.Background(), slog.String("tenant_id", "acme"))
	got := ParseLine(bytes.TrimSpace(buf.Bytes()))
	require.Equal(t, []LineSpan{{TraceID: s.Context().TraceIDHex(), SpanID: s.Context().SpanIDHex(), Name: "api.publish", Service: "api",
		Start: time.Unix(1_800_000_000, 0).UTC(), DurationMS: 1, Attributes: map[string]any{"tenant_id": "acme"}}}, got)
	for _, other := range []string{`{"msg":"delivered"}`, `not json`, `{"msg":"spans","columns":["a"],"spans":[["t","s","",0]]}`} {
		require.Empty(t, ParseLine([]byte(other)), other)
	}
}
