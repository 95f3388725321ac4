package metrics

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// emf is the shape CloudWatch reads.
type emf struct {
	AWS struct {
		Timestamp         int64 `json:"Timestamp"`
		CloudWatchMetrics []struct {
			Namespace  string     `json:"Namespace"`
			Dimensions [][]string `json:"Dimensions"`
			Metrics    []struct{ Name, Unit string }
		} `json:"CloudWatchMetrics"`
	} `json:"_aws"`
}

func lines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(buf)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		var e emf
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		require.Len(t, e.AWS.CloudWatchMetrics, 1)
		d := e.AWS.CloudWatchMetrics[0]
		require.Equal(t, Namespace, d.Namespace)
		require.Len(t, d.Metrics, 1)
		spec, ok := Catalog[d.Metrics[0].Name]
		require.True(t, ok, "metric %s is in the catalog", d.Metrics[0].Name)
		require.Equal(t, spec.Unit, d.Metrics[0].Unit)
		for _, set := range d.Dimensions {
			require.Contains(t, spec.Dimensions, set, "dimension set %v of %s is documented", set, d.Metrics[0].Name)
			for _, dim := range set {
				require.NotEmpty(t, m[dim], "every dimension has its value on the line")
			}
		}
		require.Contains(t, m, d.Metrics[0].Name, "the value is on the line")
		out = append(out, m)
	}
	return out
}

func TestPut(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := New(&buf)
	w.Now = func() time.Time { return time.UnixMilli(1796000000000) }
	w.Put(DeadLettered, 1, map[string]string{DimensionTenant: "acme", DimensionReason: "rejected_400"})
	w.Put(Delivered, 1, nil)
	w.Put(TenantDLQDepth, 7, nil) // no tenant: nothing to publish
	w.Put(AttemptLatency, 12.5, nil)
	got := lines(t, &buf)
	require.Len(t, got, 3)
	require.Equal(t, "acme", got[0][DimensionTenant])
	require.Equal(t, "rejected_400", got[0][DimensionReason])
	require.EqualValues(t, 1796000000000, got[0]["_aws"].(map[string]any)["Timestamp"])
	dims := got[0]["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0].(map[string]any)["Dimensions"]
	require.Len(t, dims, 3, "total, by reason and by tenant")
	require.Panics(t, func() { w.Put("Undocumented", 1, nil) })
	var nilWriter *Writer
	nilWriter.Put(Delivered, 1, nil) // no panic
}

// The catalog and docs/operations.md name the same metrics and dimensions.
func TestCatalogIsDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/operations.md")
	require.NoError(t, err)
	section := regexp.MustCompile("(?s)<!-- metrics -->(.*)<!-- /metrics -->").FindSubmatch(doc)
	require.NotNil(t, section, "docs/operations.md has a metrics table between <!-- metrics --> markers")
	rows := regexp.MustCompile("(?m)^\\| `(\\w+)` \\| (\\w+) \\| ([^|]*) \\|").FindAllSubmatch(section[1], -1)
	documented := map[string]bool{}
	for _, r := range rows {
		name := string(r[1])
		spec, ok := Catalog[name]
		require.True(t, ok, "documented metric %s is not published", name)
		require.Equal(t, spec.Unit, string(r[2]), "unit of %s", name)
		for _, set := range spec.Dimensions {
			label := "(none)"
			if len(set) > 0 {
				label = set[0]
			}
			require.Contains(t, string(r[3]), label, "dimension set %v of %s is documented", set, name)
		}
		documented[name] = true
	}
	for name := range Catalog {
		require.True(t, documented[name], "published metric %s is not documented", name)
	}
}

// documents reads EMF lines of any shape: each document's metrics with
// their values (a number or an array of them), checked against the catalog.
func documents(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(buf)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		var e emf
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		require.NotEmpty(t, e.AWS.CloudWatchMetrics)
		for _, d := range e.AWS.CloudWatchMetrics {
			require.Equal(t, Namespace, d.Namespace)
			for _, def := range d.Metrics {
				spec, ok := Catalog[def.Name]
				require.True(t, ok, "metric %s is in the catalog", def.Name)
				require.Equal(t, spec.Unit, def.Unit)
				switch v := m[def.Name].(type) {
				case float64:
				case []any:
					require.LessOrEqual(t, len(v), MaxValues)
				default:
					require.Failf(t, "no value", "metric %s has no value on the line", def.Name)
				}
				for _, set := range d.Dimensions {
					require.Contains(t, spec.Dimensions, set, "dimension set %v of %s is documented", set, def.Name)
					for _, dim := range set {
						require.NotEmpty(t, m[dim], "every dimension has its value on the line")
					}
				}
			}
		}
		out = append(out, m)
	}
	return out
}

// values returns a metric's values on a document.
func values(m map[string]any, metric string) []float64 {
	switch v := m[metric].(type) {
	case float64:
		return []float64{v}
	case []any:
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = x.(float64)
		}
		return out
	}
	return nil
}

// A batch prints one document per combination of dimension values, each
// metric's values as an array: as many values as separate lines gave, under
// the same names and dimension sets.
func TestBatch(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := New(&buf)
	w.Now = func() time.Time { return time.UnixMilli(1796000000000) }
	b := w.Batch()
	for i := range 10 {
		b.Put(AttemptLatency, float64(i)+0.5, nil)
		b.Put(Delivered, 1, nil)
	}
	b.Put(DeadLettered, 1, map[string]string{DimensionTenant: "acme", DimensionReason: "rejected_400"})
	b.Put(DeadLettered, 1, map[string]string{DimensionTenant: "acme", DimensionReason: "rejected_400"})
	b.Put(DeadLettered, 1, map[string]string{DimensionTenant: "zeta", DimensionReason: "rejected_400"})
	b.Put(AttemptFailed, 1, nil)
	require.Zero(t, buf.Len(), "nothing printed before Flush")
	b.Flush()
	docs := documents(t, &buf)
	require.Len(t, docs, 3, "stack-wide metrics, acme's dead letters, zeta's")

	require.Equal(t, []float64{0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5}, values(docs[0], AttemptLatency))
	require.Equal(t, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, values(docs[0], Delivered))
	require.Equal(t, []float64{1}, values(docs[0], AttemptFailed))
	require.EqualValues(t, 1, docs[0][AttemptFailed], "a single value is a plain number, as Put prints it")
	dirs := docs[0]["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)
	require.Len(t, dirs, 1, "metrics of the same dimension sets share a directive")
	require.Len(t, dirs[0].(map[string]any)["Metrics"], 3)
	require.EqualValues(t, 1796000000000, docs[0]["_aws"].(map[string]any)["Timestamp"])

	require.Equal(t, "acme", docs[1][DimensionTenant])
	require.Equal(t, "rejected_400", docs[1][DimensionReason])
	require.Equal(t, []float64{1, 1}, values(docs[1], DeadLettered))
	dims := docs[1]["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0].(map[string]any)["Dimensions"]
	require.Len(t, dims, 3, "total, by reason and by tenant, as Put publishes it")
	require.Equal(t, "zeta", docs[2][DimensionTenant])

	b.Flush()
	require.Zero(t, buf.Len(), "a flushed batch is empty")

	t.Run("at most 100 values a document", func(t *testing.T) {
		var buf bytes.Buffer
		b := New(&buf).Batch()
		for range 250 {
			b.Put(Delivered, 1, nil)
		}
		b.Flush()
		docs := documents(t, &buf)
		require.Len(t, docs, 3)
		n := 0
		for _, d := range docs {
			n += len(values(d, Delivered))
		}
		require.Equal(t, 250, n)
	})
	t.Run("nil", func(t *testing.T) {
		var w *Writer
		b := w.Batch()
		b.Put(Delivered, 1, nil)
		b.Flush()
		require.Panics(t, func() { New(&bytes.Buffer{}).Batch().Put("Undocumented", 1, nil) })
	})
}
