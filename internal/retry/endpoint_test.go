package retry

import (
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

func TestForEndpoint(t *testing.T) {
	t.Parallel()
	stack := Policy{Mode: JitterNone, MaxAge: time.Hour}

	t.Run("no schedule of its own: the stack's", func(t *testing.T) {
		p := ForEndpoint(stack, domain.Endpoint{})
		require.Equal(t, stack, p)
		require.True(t, p.Redrives())
	})

	t.Run("its own schedule, the rest the stack's", func(t *testing.T) {
		p := ForEndpoint(stack, domain.Endpoint{RetrySchedule: []int{10, 60, 600}})
		require.Equal(t, []time.Duration{0, 10 * time.Second, time.Minute, 10 * time.Minute}, p.Schedule)
		require.Equal(t, 4, p.Attempts())
		require.Equal(t, 8, p.Receives, "the queue's maxReceiveCount stays the stack's")
		require.False(t, p.Redrives(), "4 attempts of 8 receives: dead-lettered by the consumer")
		require.Equal(t, time.Hour, p.AgeCap())
		require.Equal(t, stack.LongestDelay(), p.LongestDelay())
		require.NoError(t, p.Validate())
		require.Equal(t, Decision{Retry: true, Delay: time.Minute}, p.Decide(2, t0, t0, 0, nil))
		require.Equal(t, Decision{Reason: domain.ReasonAttemptsExhausted}, p.Decide(4, t0, t0, 0, nil))
	})

	t.Run("as many attempts as the queue's receives: redriven", func(t *testing.T) {
		p := ForEndpoint(stack, domain.Endpoint{RetrySchedule: []int{1, 1, 1, 1, 1, 1, 1}})
		require.Equal(t, 8, p.Attempts())
		require.True(t, p.Redrives())
	})

	// A schedule stored before the stack's was shortened (or written past
	// the API) cannot outlast the queue's redrive, nor SQS's 12 h.
	t.Run("cut to the stack's attempts and to 12 h", func(t *testing.T) {
		short := Policy{Schedule: []time.Duration{0, time.Second, time.Second}}
		p := ForEndpoint(short, domain.Endpoint{RetrySchedule: []int{5, 99999, 5, 5, 5}})
		require.Equal(t, []time.Duration{0, 5 * time.Second, MaxDelay}, p.Schedule)
		require.True(t, p.Redrives())
		require.NoError(t, p.Validate())
	})

	// Jitter and Retry-After are the stack's rules on the endpoint's step.
	t.Run("jitter and Retry-After as for the stack", func(t *testing.T) {
		p := ForEndpoint(Policy{}, domain.Endpoint{RetrySchedule: []int{100}})
		require.Equal(t, Decision{Retry: true, Delay: 80 * time.Second}, p.Decide(1, t0, t0, 0, rndZero))
		require.Equal(t, Decision{Retry: true, Delay: 120 * time.Second}, p.Decide(1, t0, t0, 0, rndHigh))
		require.Equal(t, Decision{Retry: true, Delay: 300 * time.Second}, p.Decide(1, t0, t0, 5*time.Minute, rndMid))
		require.Equal(t, Decision{Retry: true, Delay: longest}, p.Decide(1, t0, t0, 13*time.Hour, rndMid), "Retry-After clamped to what SQS accepts")
		require.Equal(t, Decision{Reason: domain.ReasonMaxAgeExceeded}, p.Decide(1, t0, t0.Add(24*time.Hour-time.Minute), 0, rndMid), "the stack's age cap")
	})
}

func TestRedrivesRefusesMoreAttemptsThanReceives(t *testing.T) {
	t.Parallel()
	p := Policy{Schedule: []time.Duration{0, 1, 1}, Receives: 2}
	require.ErrorContains(t, p.Validate(), "3 attempts, but the queue moves a message to the DLQ after 2 receives")
	require.Error(t, Policy{Receives: -1}.Validate())
	require.NoError(t, Policy{Receives: 8}.Validate())
}

func TestCheckEndpointSchedule(t *testing.T) {
	t.Parallel()
	stack := Policy{} // 8 attempts, 24 h age cap
	tests := []struct {
		name string
		secs []int
		want []StepProblem
	}{
		{"usable", []int{10, 60, 600}, nil},
		{"zero delays", []int{0, 0}, nil},
		{"12 h steps within the cap", []int{43200, 43200}, nil},
		{"seven retries", []int{1, 1, 1, 1, 1, 1, 1}, nil},
		{"empty", []int{}, []StepProblem{{-1, "must list at least one retry delay"}}},
		{"negative", []int{5, -1}, []StepProblem{{1, "-1 s is negative"}}},
		{"over SQS's 12 h", []int{5, 60, 600, 50000}, []StepProblem{{3, "50000 s exceeds SQS's 43200 s visibility limit"}}},
		{"more retries than receives", []int{1, 1, 1, 1, 1, 1, 1, 1}, []StepProblem{{-1, "has 8 retries, at most 7: the delivery queue moves a message to the DLQ after 8 receives (its maxReceiveCount, the stack's 8 attempts)"}}},
		{"past the age cap", []int{43200, 43200, 1}, []StepProblem{{-1, "adds up to 86401 s, more than the stack's 86400 s age cap: the last retries would never be made"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, CheckEndpointSchedule(stack, tt.secs))
		})
	}
	local := Policy{Schedule: []time.Duration{0, time.Second, 4 * time.Second, 10 * time.Second}, MaxAge: time.Hour}
	require.Nil(t, CheckEndpointSchedule(local, []int{1, 1, 1}))
	require.Len(t, CheckEndpointSchedule(local, []int{1, 1, 1, 1}), 1, "the local stack's 4 attempts")
	require.Len(t, CheckEndpointSchedule(local, []int{3600, 1}), 1, "the local stack's 1 h age cap")
}
