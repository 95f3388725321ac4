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
