package jobs

import (
	"time"

	"github.com/hookline/hookline/internal/domain"
)

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

// Delay paces the n-th send of a step begun elapsed ago: due n/Rate
// seconds after the step began (c as filled in by WithDefaults), jittered
// by up to a second by rand (nil: none), so its delay is what is left of
// that, none once the step's own work (its reads, claims and sends) has
// taken longer; within SQS's 900 s limit. A step whose work is slower than
// its rate then sends as fast as its work allows, instead of adding the
// pacing on top of it.
func (c Config) Delay(n int, elapsed time.Duration, rand func() float64) int32 {
	d := float64(n)/c.Rate - elapsed.Seconds()
	if rand != nil {
		d += rand()
	}
	return int32(min(900, max(0, d)))
}
