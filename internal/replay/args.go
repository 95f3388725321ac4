package replay

import (
	"time"

	"github.com/hookline/hookline/internal/domain"
)

// IDs are a replay's arguments by delivery id (domain.KindIDs): the
// tenant's dead deliveries it sends again, in order (its cursor counts
// them).
type IDs struct {
	IDs []string `dynamodbav:"ids,omitempty"`
}

// JobKind is domain.KindIDs.
func (IDs) JobKind() domain.JobKind { return domain.KindIDs }

// Filter are a replay's arguments by filter (domain.KindFilter): the dead
// deliveries of the tenant it selects.
type Filter struct {
	Filter domain.DeadFilter `dynamodbav:"filter"`
}

// JobKind is domain.KindFilter.
func (Filter) JobKind() domain.JobKind { return domain.KindFilter }

// Bound bounds a filter without an upper bound on the time of death to
// the deaths before now, the job's start: deliveries that die while it
// runs (its own, dying again, included) are not its to replay.
func (a *Filter) Bound(now time.Time) {
	if a.Filter.Until.IsZero() {
		a.Filter.Until = now
	}
}

// Since are a replay's arguments since a time (domain.KindSince): the
// range of the tenant's deliveries it sends again, and its progress.
type Since struct {
	Range domain.Range `dynamodbav:"range"`
	// NotRebuilt counts the deliveries it could not send again: their
	// event's payload is past the retention, or its outbox item is gone
	// (by reason in the job's Skipped: SkipPayloadExpired, SkipEventGone).
	NotRebuilt int `dynamodbav:"not_rebuilt,omitempty"`
}

// JobKind is domain.KindSince.
func (Since) JobKind() domain.JobKind { return domain.KindSince }

// Bound bounds a range without its end to the events before now, the
// job's start.
func (a *Since) Bound(now time.Time) {
	if a.Range.Until.IsZero() {
		a.Range.Until = now
	}
}
