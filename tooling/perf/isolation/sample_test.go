package isolation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPercentile(t *testing.T) {
	t.Parallel()
	ms := func(vs ...int) []time.Duration {
		out := make([]time.Duration, len(vs))
		for i, v := range vs {
			out[i] = time.Duration(v) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100..1, unsorted on purpose
	}
	forty := make([]int, 40)
	for i := range forty {
		forty[i] = i + 1
	}
	for _, tc := range []struct {
		name   string
		sample Sample
		q      float64
		want   time.Duration
		ok     bool
	}{
		{"empty", Sample{}, 0.5, 0, false},
		{"one", Sample{Got: ms(7)}, 0.95, 7 * time.Millisecond, true},
		{"p50 of 100 is the 50th", Sample{Got: ms(hundred...)}, 0.50, 50 * time.Millisecond, true},
		{"p95 of 100 is the 95th", Sample{Got: ms(hundred...)}, 0.95, 95 * time.Millisecond, true},
		{"p100 is the max", Sample{Got: ms(hundred...)}, 1, 100 * time.Millisecond, true},
		{"p50 of 40 is the 20th", Sample{Got: ms(forty...)}, 0.50, 20 * time.Millisecond, true},
		{"p95 of 40 is the 38th", Sample{Got: ms(forty...)}, 0.95, 38 * time.Millisecond, true},
		{"p50 of an even pair is the lower", Sample{Got: ms(10, 20)}, 0.5, 10 * time.Millisecond, true},
		{"missing events rank above every received", Sample{Got: ms(forty[:37]...), Missing: 3}, 0.95, 0, false},
		{"missing events do not move a low rank", Sample{Got: ms(forty[:37]...), Missing: 3}, 0.50, 20 * time.Millisecond, true},
		{"all missing", Sample{Missing: 4}, 0.5, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.sample.Percentile(tc.q)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestPercentileLeavesTheSampleUnsorted(t *testing.T) {
	t.Parallel()
	s := Sample{Got: []time.Duration{3, 1, 2}}
	_, _ = s.Percentile(0.5)
	require.Equal(t, []time.Duration{3, 1, 2}, s.Got)
}
