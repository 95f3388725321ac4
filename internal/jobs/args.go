package jobs

import (
	"fmt"

	"github.com/hookline/hookline/internal/domain"
)

// ArgsOf returns job j's arguments as their kind's type A (a struct whose
// value implements domain.JobArgs), decoding them on first use from the
// record the store read, and leaves them in j.Args: what the step changes
// in them is saved with the record. A job without arguments gets A's zero
// value; arguments of another kind are an error.
func ArgsOf[A domain.JobArgs](j *domain.Job) (*A, error) {
	if a, ok := any(j.Args).(*A); ok {
		return a, nil
	}
	a := new(A)
	switch got := j.Args.(type) {
	case nil:
	case A:
		*a = got
	case domain.StoredArgs:
		if err := got.DecodeArgs(a); err != nil {
			return nil, fmt.Errorf("job %s: %w", j.JobID, err)
		}
	default:
		return nil, fmt.Errorf("job %s: arguments %T, not %T", j.JobID, j.Args, *a)
	}
	if k := (*a).JobKind(); k != j.Kind {
		// One type may serve several kinds (JobKind reads a field); else
		// the step was given another kind's job.
		return nil, fmt.Errorf("job %s is a %s job, not a %s job", j.JobID, j.Kind, k)
	}
	j.Args = any(a).(domain.JobArgs)
	return a, nil
}
