package curve

import (
	"testing"
	"time"

	"github.com/hookline/hookline/tooling/perf/pipeline"
	"github.com/stretchr/testify/require"
)

func TestParseSteps(t *testing.T) {
	s, err := ParseSteps(StepsDefault)
	require.NoError(t, err)
	require.Equal(t, []int{2, 5, 10, 20}, s)
	s, err = ParseSteps(" 2, 10 ")
	require.NoError(t, err)
	require.Equal(t, []int{2, 10}, s)
	for _, bad := range []string{"", "1,5", "2,5,5", "10,5", "2,x", "2,101", "2,,5", "2.5"} {
		_, err := ParseSteps(bad)
		require.Error(t, err, bad)
	}
}

func TestModel(t *testing.T) {
	require.InDelta(t, 400, Model(2, 50*time.Millisecond), 1e-9)
	require.InDelta(t, 4000, Model(20, 50*time.Millisecond), 1e-9)
	require.Zero(t, Model(2, 0))
}

func TestKnee(t *testing.T) {
	conc := []int{2, 5, 10, 20}
	// Proportional growth: no knee.
	_, ok := Knee(conc, []float64{100, 250, 500, 1000})
	require.False(t, ok)
	// 5 → 10 doubles the concurrency, the rate grows 10% (< a quarter of
	// 100%): flat from 5.
	k, ok := Knee(conc, []float64{100, 240, 264, 270})
	require.True(t, ok)
	require.Equal(t, 5, k)
	// Exactly a quarter of the proportional gain still counts as growth.
	_, ok = Knee([]int{10, 20}, []float64{100, 125})
	require.False(t, ok)
	_, ok = Knee([]int{10, 20}, []float64{100, 124})
	require.True(t, ok)
	// A falling rate is flat.
	k, ok = Knee(conc, []float64{100, 90, 80, 70})
	require.True(t, ok)
	require.Equal(t, 2, k)
	// One step cannot flatten; a zero rate is skipped.
	_, ok = Knee([]int{2}, []float64{100})
	require.False(t, ok)
	_, ok = Knee([]int{2, 5}, []float64{0, 100})
	require.False(t, ok)
}

func point(c int, hookPerS, floorPerS float64) Point {
	burst := func(perS float64) pipeline.BurstResult {
		return pipeline.BurstResult{N: 1000, Elapsed: time.Duration(1000 / perS * float64(time.Second))}
	}
	return Point{Concurrency: c, Hookline: burst(hookPerS), Floor: burst(floorPerS)}
}

func TestRatio(t *testing.T) {
	require.InDelta(t, 0.5, point(2, 100, 200).Ratio(), 1e-9)
	require.Zero(t, Point{Concurrency: 2}.Ratio())
}

func TestFlatteningVerdict(t *testing.T) {
	for _, c := range []struct {
		name   string
		points []Point
		shape  Shape
		says   string
		limit  string
	}{
		{"neither", []Point{point(2, 100, 200), point(5, 250, 500), point(10, 500, 1000)},
			Shape{Last: 10}, "neither flattens up to C=10", "neither yet"},
		{"hookline only", []Point{point(2, 100, 200), point(5, 110, 500), point(10, 115, 1000)},
			Shape{HooklineKnee: 2, HooklineFlat: true, Last: 10}, "hookline flattens from C=2 while the floor still grows to C=10: hookline's own work is the limit", "hookline's work"},
		{"hookline first", []Point{point(2, 100, 200), point(5, 110, 500), point(10, 115, 520)},
			Shape{HooklineKnee: 2, FloorKnee: 5, HooklineFlat: true, FloorFlat: true, Last: 10}, "hookline flattens from C=2, the floor from C=5", "hookline's work"},
		{"together", []Point{point(2, 100, 200), point(5, 240, 480), point(10, 250, 500)},
			Shape{HooklineKnee: 5, FloorKnee: 5, HooklineFlat: true, FloorFlat: true, Last: 10}, "both flatten from C=5: the machine (the local cloud) is the limit", "the machine"},
		{"floor first", []Point{point(2, 100, 200), point(5, 240, 210), point(10, 250, 220)},
			Shape{HooklineKnee: 5, FloorKnee: 2, HooklineFlat: true, FloorFlat: true, Last: 10}, "the floor flattens from C=2, hookline from C=5: the machine is the limit first", "the machine"},
		{"floor only", []Point{point(2, 100, 200), point(5, 240, 210), point(10, 480, 220)},
			Shape{FloorKnee: 2, FloorFlat: true, Last: 10}, "the floor flattens from C=2, hookline still grows to C=10", "the machine"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := Flattening(c.points)
			require.Equal(t, c.shape, s)
			require.Contains(t, s.Verdict(), c.says)
			require.Equal(t, c.limit, s.Limit())
		})
	}
	require.Equal(t, Shape{}, Flattening(nil))
}

func TestKnees(t *testing.T) {
	h, f := Shape{HooklineKnee: 5, HooklineFlat: true, Last: 20}.Knees()
	require.Equal(t, "from C=5", h)
	require.Equal(t, "not up to C=20", f)
}

func TestConfigDefaults(t *testing.T) {
	c := Config{}.withDefaults()
	require.Equal(t, []int{2, 5, 10, 20}, c.Steps)
	require.Equal(t, EventsDefault, c.Events)
	require.Equal(t, DelayDefault, c.Delay)
	require.Equal(t, BudgetDefault, c.Budget)
	require.NotNil(t, c.Log)
	c = Config{Steps: []int{3}, Events: 7, Delay: time.Second}.withDefaults()
	require.Equal(t, []int{3}, c.Steps)
	require.Equal(t, 7, c.Events)
	require.Equal(t, time.Second, c.Delay)
}
