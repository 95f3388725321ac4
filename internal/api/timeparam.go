package api

import (
	"time"

	"github.com/hookline/hookline/internal/store"
)

// timeParam reads one RFC 3339 time parameter (since, until) as the
// listings and the stats route take it: absent (""), it is the zero time
// and no error; otherwise it must parse and lie in the years a key can
// hold. A bad value adds its field's error to errs and reads as zero.
func timeParam(field, v string, errs *[]FieldError) time.Time {
	if v == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	switch {
	case err != nil:
		*errs = append(*errs, FieldError{Field: field, Message: "must be an RFC 3339 time, like 2026-11-30T01:00:00Z"})
	case !store.KeyTime(t):
		*errs = append(*errs, FieldError{Field: field, Message: "must be from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59Z (in UTC)"})
	default:
		return t
	}
	return time.Time{}
}
