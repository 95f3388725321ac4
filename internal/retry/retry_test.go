package retry

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	// t0 is the fixed clock: the event occurs, and fails, at t0.
	t0 = time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)

	rndMid  = func() float64 { return 0.5 }                  // factor exactly 1
	rndZero = func() float64 { return 0 }                    // lowest draw
	rndHigh = func() float64 { return math.Nextafter(1, 0) } // highest draw, ≈1

	// longest is the default policy's longest delay: 12 h less the 2 min
	// queue visibility timeout less the 1 min margin.
	longest = 11*time.Hour + 57*time.Minute
)

func TestDefaults(t *testing.T) {
	t.Parallel()
	require.Equal(t, 12*time.Hour, MaxDelay)
	require.Equal(t, []time.Duration{0, 5 * time.Second, 30 * time.Second, 5 * time.Minute,
		30 * time.Minute, 2 * time.Hour, 8 * time.Hour, 12 * time.Hour}, DefaultSchedule)
	require.Equal(t, 0.2, DefaultJitter)
	require.Equal(t, 24*time.Hour, DefaultMaxAge)
	require.Equal(t, 2*time.Minute, DefaultVisibilityTimeout)
	require.Equal(t, time.Minute, VisibilityMargin)
	require.Equal(t, longest, Policy{}.LongestDelay())
	require.Equal(t, JitterProportional, Policy{}.Mode)
	require.NoError(t, Policy{}.Validate())
	require.Equal(t, 8, Policy{}.Attempts())
	require.Equal(t, 3, Policy{Schedule: []time.Duration{0, time.Second, time.Minute}}.Attempts())
	require.Equal(t, 22*time.Hour+35*time.Minute+35*time.Second, Policy{}.Span(), "the default schedule's delays together")
	require.Equal(t, 15*time.Second, Policy{Schedule: []time.Duration{0, time.Second, 4 * time.Second, 10 * time.Second}}.Span(), "the local cloud's")
}

func TestDecideSchedule(t *testing.T) {
	t.Parallel()
	// With rnd = 0.5 proportional jitter is a factor of exactly 1, so the
	// delay after failed attempt n is DefaultSchedule[n], the 12 h step
	// shortened to the longest delay SQS accepts.
	tests := []struct {
		attempt int
		want    Decision
	}{
		{0, Decision{Retry: true, Delay: 5 * time.Second}}, // below 1 counts as 1
		{1, Decision{Retry: true, Delay: 5 * time.Second}},
		{2, Decision{Retry: true, Delay: 30 * time.Second}},
		{3, Decision{Retry: true, Delay: 5 * time.Minute}},
		{4, Decision{Retry: true, Delay: 30 * time.Minute}},
		{5, Decision{Retry: true, Delay: 2 * time.Hour}},
		{6, Decision{Retry: true, Delay: 8 * time.Hour}},
		{7, Decision{Retry: true, Delay: longest}},
		{8, Decision{Reason: "attempts_exhausted"}},
		{9, Decision{Reason: "attempts_exhausted"}},
	}
	for _, tt := range tests {
		t.Run("attempt "+strconv.Itoa(tt.attempt), func(t *testing.T) {
			require.Equal(t, tt.want, Policy{}.Decide(tt.attempt, t0, t0, 0, rndMid))
			// No jitter source, and JitterNone, give the same answer.
			require.Equal(t, tt.want, Policy{}.Decide(tt.attempt, t0, t0, 0, nil))
			require.Equal(t, tt.want, Policy{Mode: JitterNone}.Decide(tt.attempt, t0, t0, 0, rndZero))
		})
	}
}

func TestDecideJitter(t *testing.T) {
	t.Parallel()
	custom := []time.Duration{0, 10 * time.Second, 100 * time.Second, 11 * time.Hour}
	tests := []struct {
		name    string
		policy  Policy
		attempt int
		rnd     func() float64
		want    time.Duration
	}{
		{"default low", Policy{}, 1, rndZero, 4 * time.Second},       // 5s * 0.8
		{"default high", Policy{}, 1, rndHigh, 6 * time.Second},      // 5s * ~1.2, rounded up
		{"default mid", Policy{}, 1, rndMid, 5 * time.Second},        // 5s * 1
		{"default 30s low", Policy{}, 2, rndZero, 24 * time.Second},  // 30s * 0.8
		{"default 30s high", Policy{}, 2, rndHigh, 36 * time.Second}, // 30s * ~1.2
		{"default 2h low", Policy{}, 5, rndZero, 96 * time.Minute},   // 2h * 0.8
		{"default 2h high", Policy{}, 5, rndHigh, 144 * time.Minute}, // 2h * ~1.2
		{"default 12h high clamps", Policy{}, 7, rndHigh, longest},   // 14.4h -> 11h57m
		{"default 12h low", Policy{}, 7, rndZero, 576 * time.Minute}, // 12h * 0.8
		{"jitter 0.5 low", Policy{Schedule: custom, Jitter: 0.5}, 1, rndZero, 5 * time.Second},
		{"jitter 0.5 high", Policy{Schedule: custom, Jitter: 0.5}, 1, rndHigh, 15 * time.Second},
		{"jitter 1 low", Policy{Schedule: custom, Jitter: 1}, 2, rndZero, 0},
		{"jitter 1 high", Policy{Schedule: custom, Jitter: 1}, 2, rndHigh, 200 * time.Second},
		{"11h high clamps", Policy{Schedule: custom}, 3, rndHigh, longest}, // 13.2h -> 11h57m
		{"11h mid is kept", Policy{Schedule: custom}, 3, rndMid, 11 * time.Hour},
		{"12h under a 90 min visibility", Policy{VisibilityTimeout: 90 * time.Minute}, 7, rndMid, 10*time.Hour + 29*time.Minute},
		{"full low", Policy{Mode: JitterFull}, 3, rndZero, 0},
		{"full mid", Policy{Mode: JitterFull}, 3, rndMid, 150 * time.Second},
		{"full high", Policy{Mode: JitterFull}, 3, rndHigh, 5 * time.Minute},
		{"full 0.3 of 5s rounds up", Policy{Mode: JitterFull}, 1, func() float64 { return 0.3 }, 2 * time.Second},
		{"full ignores Jitter", Policy{Mode: JitterFull, Jitter: 0.1}, 2, func() float64 { return 0.25 }, 8 * time.Second},
		{"none ignores rnd", Policy{Mode: JitterNone}, 4, rndZero, 30 * time.Minute},
		{"rnd out of range is clamped", Policy{}, 1, func() float64 { return 7 }, 6 * time.Second},
		{"rnd NaN is clamped", Policy{}, 1, math.NaN, 4 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.policy.Decide(tt.attempt, t0, t0, 0, tt.rnd)
			require.Equal(t, Decision{Retry: true, Delay: tt.want}, got)
		})
	}
}

func TestDecideJitterBounds(t *testing.T) {
	t.Parallel()
	// Sweep the random source: every delay stays within ±20 % of the step
	// (rounded up to whole seconds), within [0, LongestDelay], in whole
	// seconds.
	for attempt := 1; attempt < len(DefaultSchedule); attempt++ {
		base := DefaultSchedule[attempt]
		lo := time.Duration(float64(base) * 0.8).Truncate(time.Second)
		hi := min(time.Duration(float64(base)*1.2)+time.Second, longest)
		for i := 0; i < 1000; i++ {
			r := float64(i) / 1000
			d := Policy{}.Decide(attempt, t0, t0, 0, func() float64 { return r })
			require.True(t, d.Retry)
			require.GreaterOrEqual(t, d.Delay, lo, "attempt %d rnd %v", attempt, r)
			require.LessOrEqual(t, d.Delay, hi, "attempt %d rnd %v", attempt, r)
			require.Zero(t, d.Delay%time.Second, "attempt %d rnd %v", attempt, r)

			f := Policy{Mode: JitterFull}.Decide(attempt, t0, t0, 0, func() float64 { return r })
			require.True(t, f.Retry)
			require.GreaterOrEqual(t, f.Delay, time.Duration(0))
			require.LessOrEqual(t, f.Delay, min(base, longest))
			require.Zero(t, f.Delay%time.Second)
		}
	}
}

func TestDecideRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		policy     Policy
		attempt    int
		retryAfter time.Duration
		rnd        func() float64
		want       time.Duration
	}{
		{"none", Policy{}, 2, 0, rndMid, 30 * time.Second},
		{"below schedule", Policy{}, 2, 10 * time.Second, rndMid, 30 * time.Second},
		{"below jittered schedule", Policy{}, 2, 25 * time.Second, rndZero, 25 * time.Second}, // jittered 24s < 25s
		{"above schedule", Policy{}, 2, 90 * time.Second, rndMid, 90 * time.Second},
		{"above schedule, fraction rounds up", Policy{}, 1, 7*time.Second + time.Millisecond, rndMid, 8 * time.Second},
		{"just under the longest delay", Policy{}, 2, longest - time.Second, rndMid, longest - time.Second},
		{"the longest delay", Policy{}, 2, longest, rndMid, longest},
		{"a fraction over the longest delay", Policy{}, 2, longest + time.Millisecond, rndMid, longest},
		{"11h59m", Policy{}, 2, 11*time.Hour + 59*time.Minute, rndMid, longest},
		{"12h", Policy{}, 2, 12 * time.Hour, rndMid, longest},
		{"13h", Policy{}, 2, 13 * time.Hour, rndMid, longest},
		{"above 12h", Policy{}, 2, 20 * time.Hour, rndMid, longest},
		{"huge", Policy{}, 1, time.Duration(math.MaxInt64), rndMid, longest},
		{"13h on the last retry", Policy{}, 7, 13 * time.Hour, rndHigh, longest},
		{"negative ignored", Policy{}, 2, -time.Hour, rndMid, 30 * time.Second},
		{"with full jitter", Policy{Mode: JitterFull}, 3, time.Minute, rndZero, time.Minute},
		{"with no jitter", Policy{Mode: JitterNone}, 3, time.Hour, nil, time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.policy.Decide(tt.attempt, t0, t0, tt.retryAfter, tt.rnd)
			require.Equal(t, Decision{Retry: true, Delay: tt.want}, got)
		})
	}
}

func TestDecideMaxAge(t *testing.T) {
	t.Parallel()
	exceeded := Decision{Reason: "max_age_exceeded"}
	tests := []struct {
		name       string
		policy     Policy
		attempt    int
		now        time.Time
		retryAfter time.Duration
		want       Decision
	}{
		{"fits", Policy{}, 7, t0.Add(12 * time.Hour), 0, Decision{Retry: true, Delay: longest}},
		// A 12 h wait from 12h2m would end past the cap; the longest delay
		// SQS accepts ends inside it: the clamp keeps the attempt.
		{"the clamp brings the last attempt inside the cap", Policy{}, 7, t0.Add(12*time.Hour + 2*time.Minute), 0, Decision{Retry: true, Delay: longest}},
		{"a Retry-After of 13h on the last retry is clamped, not dropped", Policy{}, 7, t0.Add(12 * time.Hour), 13 * time.Hour, Decision{Retry: true, Delay: longest}},
		{"the longest delay exactly at the cap", Policy{}, 7, t0.Add(24*time.Hour - longest), 0, Decision{Retry: true, Delay: longest}},
		{"the longest delay a second past the cap", Policy{}, 7, t0.Add(24*time.Hour - longest + time.Second), 0, exceeded},
		{"exactly at the cap", Policy{}, 6, t0.Add(16 * time.Hour), 0, Decision{Retry: true, Delay: 8 * time.Hour}},
		{"one second past the cap", Policy{}, 6, t0.Add(16*time.Hour + time.Second), 0, exceeded},
		{"next attempt after cap", Policy{}, 7, t0.Add(13 * time.Hour), 0, exceeded},
		{"already past", Policy{}, 1, t0.Add(25 * time.Hour), 0, exceeded},
		{"retry-after pushes past", Policy{}, 1, t0.Add(23 * time.Hour), 2 * time.Hour, exceeded},
		{"custom max age", Policy{MaxAge: time.Hour}, 4, t0.Add(31 * time.Minute), 0, exceeded},
		{"custom max age fits", Policy{MaxAge: time.Hour}, 4, t0.Add(30 * time.Minute), 0, Decision{Retry: true, Delay: 30 * time.Minute}},
		{"exhaustion wins over age", Policy{}, 8, t0.Add(48 * time.Hour), 0, Decision{Reason: "attempts_exhausted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.policy.Decide(tt.attempt, t0, tt.now, tt.retryAfter, rndMid))
		})
	}
}

func TestDecideExhaustion(t *testing.T) {
	t.Parallel()
	short := Policy{Schedule: []time.Duration{0, time.Minute}}
	require.Equal(t, 2, short.Attempts())
	require.Equal(t, Decision{Retry: true, Delay: time.Minute}, short.Decide(1, t0, t0, 0, rndMid))
	require.Equal(t, Decision{Reason: "attempts_exhausted"}, short.Decide(2, t0, t0, 0, rndMid))

	single := Policy{Schedule: []time.Duration{0}}
	require.Equal(t, 1, single.Attempts())
	require.Equal(t, Decision{Reason: "attempts_exhausted"}, single.Decide(1, t0, t0, time.Minute, rndMid))

	// An invalid, empty schedule never retries rather than panicking.
	empty := Policy{Schedule: []time.Duration{}}
	require.Equal(t, 0, empty.Attempts())
	require.Equal(t, Decision{Reason: "attempts_exhausted"}, empty.Decide(1, t0, t0, 0, rndMid))
}

func TestDecideInvalidPolicyStaysInRange(t *testing.T) {
	t.Parallel()
	// Decide does not require a validated policy; its delay stays sane.
	p := Policy{Schedule: []time.Duration{0, -time.Hour, 48 * time.Hour}, Jitter: -3, Mode: 42}
	require.Equal(t, Decision{Retry: true, Delay: 0}, p.Decide(1, t0, t0, 0, rndHigh))
	require.Equal(t, Decision{Retry: true, Delay: longest}, p.Decide(2, t0, t0, 0, rndMid))
	// A visibility timeout that leaves no room gives delay 0, never a
	// negative one.
	q := Policy{VisibilityTimeout: 13 * time.Hour}
	require.Equal(t, Decision{Retry: true, Delay: 0}, q.Decide(7, t0, t0, time.Hour, rndMid))
}

func TestLongestDelay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		visibility time.Duration
		want       time.Duration
	}{
		{"default (2 min)", 0, 11*time.Hour + 57*time.Minute},
		{"6 min", 6 * time.Minute, 11*time.Hour + 53*time.Minute},
		{"30 s", 30 * time.Second, 11*time.Hour + 58*time.Minute + 30*time.Second},
		{"sub-second rounds the delay down", 1500 * time.Millisecond, 11*time.Hour + 58*time.Minute + 58*time.Second},
		{"90 min (a 15 min deliver timeout)", 90 * time.Minute, 10*time.Hour + 29*time.Minute},
		{"11h58m59s leaves a second", 11*time.Hour + 58*time.Minute + 59*time.Second, time.Second},
		{"11h59m leaves nothing", 11*time.Hour + 59*time.Minute, 0},
		{"12h leaves nothing", 12 * time.Hour, 0},
		{"huge leaves nothing", time.Duration(math.MaxInt64), 0},
		{"negative counts as none", -time.Hour, 11*time.Hour + 59*time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Policy{VisibilityTimeout: tt.visibility}.LongestDelay())
		})
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		policy Policy
		err    string
	}{
		{"zero", Policy{}, ""},
		{"custom", Policy{Schedule: []time.Duration{0, time.Second, MaxDelay}, Jitter: 1, Mode: JitterFull, MaxAge: time.Hour}, ""},
		{"jitter none", Policy{Mode: JitterNone}, ""},
		{"empty schedule", Policy{Schedule: []time.Duration{}}, "retry: schedule is empty: at least one attempt is needed"},
		{"negative step", Policy{Schedule: []time.Duration{0, 5 * time.Second, -5 * time.Second}}, "retry: step 2 (-5s) is negative"},
		{"step above 12h", Policy{Schedule: []time.Duration{0, 5 * time.Second, 30 * time.Second, 13 * time.Hour}}, "retry: step 3 (13h) exceeds 12h: SQS cannot hide a message for longer"},
		{"step just above 12h", Policy{Schedule: []time.Duration{0, MaxDelay + time.Second}}, "retry: step 1 (12h0m1s) exceeds 12h: SQS cannot hide a message for longer"},
		{"too many steps", Policy{Schedule: make([]time.Duration, 1001)}, "retry: schedule has 1001 steps: SQS allows at most 1000 receives (maxReceiveCount)"},
		{"jitter negative", Policy{Jitter: -0.1}, "retry: jitter -0.1 is outside [0, 1]"},
		{"jitter above 1", Policy{Jitter: 1.5}, "retry: jitter 1.5 is outside [0, 1]"},
		{"jitter NaN", Policy{Jitter: math.NaN()}, "retry: jitter NaN is outside [0, 1]"},
		{"unknown mode", Policy{Mode: 7}, "retry: unknown jitter mode 7"},
		{"negative max age", Policy{MaxAge: -time.Hour}, "retry: max age -1h is negative"},
		{"12h step under a 90 min visibility", Policy{Schedule: []time.Duration{0, MaxDelay}, VisibilityTimeout: 90 * time.Minute}, ""},
		{"negative visibility timeout", Policy{VisibilityTimeout: -time.Second}, "retry: visibility timeout -1s is negative"},
		{"visibility timeout leaves no delay", Policy{VisibilityTimeout: 12 * time.Hour}, "retry: visibility timeout 12h leaves no delay: SQS hides a message at most 12h from its receive"},
		{"visibility timeout leaves less than a second", Policy{VisibilityTimeout: 11*time.Hour + 58*time.Minute + 59*time.Second + time.Millisecond}, "leaves no delay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.policy.Validate()
			switch {
			case tt.err == "":
				require.NoError(t, err)
			case strings.HasPrefix(tt.err, "retry: "):
				require.EqualError(t, err, tt.err)
			default:
				require.ErrorContains(t, err, tt.err)
			}
		})
	}
}

func TestParseSchedule(t *testing.T) {
	t.Parallel()
	good := []struct {
		in   string
		want []time.Duration
	}{
		{"0s,5s,30s,5m", []time.Duration{0, 5 * time.Second, 30 * time.Second, 5 * time.Minute}},
		{" 0s , 5s,\t30s ,5m ", []time.Duration{0, 5 * time.Second, 30 * time.Second, 5 * time.Minute}},
		{"0", []time.Duration{0}},
		{"0s, 1h30m, 12h", []time.Duration{0, 90 * time.Minute, 12 * time.Hour}},
		{"0s,5s,30s,5m,30m,2h,8h,12h", DefaultSchedule},
		{"500ms", []time.Duration{500 * time.Millisecond}},
	}
	for _, tt := range good {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSchedule(tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.NoError(t, Policy{Schedule: got}.Validate())
		})
	}

	bad := []struct {
		in  string
		err string
	}{
		{"", "retry: schedule is empty: at least one attempt is needed"},
		{"  ", "retry: schedule is empty: at least one attempt is needed"},
		{"0s,,5s", "retry: schedule step 1 is empty"},
		{"0s,5s,", "retry: schedule step 2 is empty"},
		{"0s,5x", `retry: schedule step 1 ("5x") is not a duration: time: unknown unit "x" in duration "5x"`},
		{"0s,5s,thirty", `retry: schedule step 2 ("thirty") is not a duration: time: invalid duration "thirty"`},
		{"0s,5", `retry: schedule step 1 ("5") is not a duration: time: missing unit in duration "5"`},
		{"0s,-5s", "retry: step 1 (-5s) is negative"},
		{"0s,5s,30s,13h", "retry: step 3 (13h) exceeds 12h: SQS cannot hide a message for longer"},
		{strings.Repeat("0s,", 1000) + "0s", "retry: schedule has 1001 steps: SQS allows at most 1000 receives (maxReceiveCount)"},
	}
	for _, tt := range bad {
		name := tt.in
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			got, err := ParseSchedule(tt.in)
			require.EqualError(t, err, tt.err)
			require.Nil(t, got)
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2015, 10, 21, 7, 28, 0, 0, time.UTC)
	tests := []struct {
		name string
		in   string
		want time.Duration
		ok   bool
	}{
		{"seconds", "120", 2 * time.Minute, true},
		{"seconds with spaces", " 5 ", 5 * time.Second, true},
		{"zero", "0", 0, true},
		{"leading zeros", "007", 7 * time.Second, true},
		{"huge seconds saturate", "99999999999999999999999", time.Duration(math.MaxInt64), true},
		{"IMF-fixdate", "Wed, 21 Oct 2015 07:30:00 GMT", 2 * time.Minute, true},
		{"RFC 850 date", "Wednesday, 21-Oct-15 07:29:00 GMT", time.Minute, true},
		{"asctime date", "Wed Oct 21 07:28:30 2015", 30 * time.Second, true},
		{"date now", "Wed, 21 Oct 2015 07:28:00 GMT", 0, true},
		{"past date", "Wed, 21 Oct 2015 07:27:59 GMT", 0, false},
		{"empty", "", 0, false},
		{"blank", "   ", 0, false},
		{"negative", "-5", 0, false},
		{"plus sign", "+5", 0, false},
		{"fraction", "1.5", 0, false},
		{"duration", "5s", 0, false},
		{"garbage", "soon", 0, false},
		{"bad date", "Wed, 32 Oct 2015 07:28:00 GMT", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseRetryAfter(tt.in, now)
			require.Equal(t, tt.ok, ok)
			require.Equal(t, tt.want, got)
		})
	}

	t.Run("sub-second now", func(t *testing.T) {
		got, ok := ParseRetryAfter("Wed, 21 Oct 2015 07:28:10 GMT", now.Add(500*time.Millisecond))
		require.True(t, ok)
		require.Equal(t, 9500*time.Millisecond, got)
		// Decide rounds it up to whole seconds.
		d := Policy{}.Decide(1, now, now, got, rndMid)
		require.Equal(t, Decision{Retry: true, Delay: 10 * time.Second}, d)
	})
}

func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{"", "0s,5s,30s,5m", " 0s , 5s ", "0s,,5s", "13h", "-1s", "1h30m,500ms", "5x", "9223372036854775807ns", ","} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseSchedule(s)
		if err != nil {
			require.Nil(t, got)
			require.True(t, strings.HasPrefix(err.Error(), "retry: "), err.Error())
			return
		}
		require.NotEmpty(t, got)
		p := Policy{Schedule: got}
		require.NoError(t, p.Validate())
		for a := 0; a <= len(got); a++ {
			d := p.Decide(a, t0, t0, 0, rndHigh)
			require.GreaterOrEqual(t, d.Delay, time.Duration(0))
			require.LessOrEqual(t, d.Delay, p.LongestDelay())
			require.Zero(t, d.Delay%time.Second)
		}
	})
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "120", "0", "-1", "Wed, 21 Oct 2015 07:28:00 GMT", "Wednesday, 21-Oct-15 07:28:00 GMT", "Wed Oct 21 07:28:00 2015", "99999999999999999999", "garbage"} {
		f.Add(s, int64(1445412480))
	}
	f.Fuzz(func(t *testing.T, s string, unix int64) {
		now := time.Unix(unix, 0)
		got, ok := ParseRetryAfter(s, now)
		if !ok {
			require.Zero(t, got)
			return
		}
		require.GreaterOrEqual(t, got, time.Duration(0))
		d := Policy{}.Decide(1, now, now, got, rndMid)
		require.LessOrEqual(t, d.Delay, longest)
	})
}
