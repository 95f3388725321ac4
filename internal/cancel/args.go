package cancel

import (
	"time"

	"github.com/hookline/hookline/internal/domain"
)

// MaxCancelledIDs bounds the ids a cancel job's record names (its count
// is kept whole): a job record stays far within DynamoDB's item size.
const MaxCancelledIDs = 100

// Args are a cancel job's arguments (domain.KindCancel): the range of one
// endpoint's deliveries it cancels, and its progress.
type Args struct {
	Range domain.Range `dynamodbav:"range"`
	// Cancelled counts the deliveries cancelled; CancelledIDs names the
	// first MaxCancelledIDs of them.
	Cancelled    int      `dynamodbav:"cancelled,omitempty"`
	CancelledIDs []string `dynamodbav:"cancelled_ids,omitempty"`
}

// JobKind is domain.KindCancel.
func (Args) JobKind() domain.JobKind { return domain.KindCancel }

// Bound bounds a range without its end to the events before now, the
// job's start.
func (a *Args) Bound(now time.Time) {
	if a.Range.Until.IsZero() {
		a.Range.Until = now
	}
}
