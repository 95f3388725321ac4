package jobs

import "github.com/hookline/hookline/internal/domain"

// maxSkippedIDs bounds the skipped deliveries a job names (their count by
// reason is kept whole).
const maxSkippedIDs = 100

// Skip counts a delivery (or message) id that job j left alone, and why.
func Skip(j *domain.Job, id, reason string) {
	if j.Skipped == nil {
		j.Skipped = map[string]int{}
	}
	j.Skipped[reason]++
	if j.SkippedIDs == nil {
		j.SkippedIDs = map[string]string{}
	}
	if len(j.SkippedIDs) < maxSkippedIDs {
		j.SkippedIDs[id] = reason
	}
}

// Delay paces the n-th send of a step: n/Rate seconds (c as filled in by
// WithDefaults), jittered by up to a second by rand (nil: none), within
// SQS's 900 s limit.
func (c Config) Delay(n int, rand func() float64) int32 {
	d := float64(n) / c.Rate
	if rand != nil {
		d += rand()
	}
	return int32(min(900, d))
}
