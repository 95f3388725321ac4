package dlq

import "github.com/hookline/hookline/internal/domain"

// RedriveArgs are the operator's redrive's arguments (domain.KindRedrive):
// it takes none, the whole DLQ, and keeps its waits as progress.
type RedriveArgs struct {
	// DLQWaits counts its steps in a row, with nothing moved, that found
	// DLQ messages hidden by someone else and waited for them.
	DLQWaits int `dynamodbav:"dlq_waits,omitempty"`
}

// JobKind is domain.KindRedrive.
func (RedriveArgs) JobKind() domain.JobKind { return domain.KindRedrive }
