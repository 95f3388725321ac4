package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/hookline/hookline/internal/domain"
)

// An endpoint's failure-rate alert (domain.FailureRateAlert, issue 38) as
// the API takes and shows it: an object
//
//	{"threshold_percent": 20, "window_hours": 1, "min_attempts": 20}
//
// threshold_percent required (1 to 100), window_hours 1 to 24 (default 1:
// the counters are hourly buckets, so the window is the current hour and
// that many whole hours before it), min_attempts 1 to 10000 (default 20).
// On create, absent or null: none. On update, absent leaves it, null
// removes it, an object replaces it whole (its absent fields at their
// defaults, not at the stored values); any change of it ends a degraded
// episode (store.EndpointChange.FailureRateAlert). It is stored with its
// defaults applied and shown so. Three numbers hookline bounds: not
// counted in the endpoint_bytes cap.

// FailureRateAlertView is an endpoint's failure-rate alert, its defaults
// applied.
type FailureRateAlertView struct {
	ThresholdPercent int `json:"threshold_percent"`
	WindowHours      int `json:"window_hours"`
	MinAttempts      int `json:"min_attempts"`
}

// failureRateAlertView is a's view, nil for none.
func failureRateAlertView(a *domain.FailureRateAlert) *FailureRateAlertView {
	if a == nil {
		return nil
	}
	return &FailureRateAlertView{ThresholdPercent: a.ThresholdPercent, WindowHours: a.WindowHours, MinAttempts: a.MinAttempts}
}

// failureRateAlertInput is the failure_rate_alert object as sent.
type failureRateAlertInput struct {
	ThresholdPercent *int `json:"threshold_percent"`
	WindowHours      *int `json:"window_hours"`
	MinAttempts      *int `json:"min_attempts"`
}

// noAlert reports whether a failure_rate_alert field is absent or null.
func noAlert(raw json.RawMessage) bool {
	return raw == nil || string(bytes.TrimSpace(raw)) == "null"
}

// decodeAlert reads a failure_rate_alert object, or says what field of
// it is not one (its name, "" for the whole) and why.
func decodeAlert(raw json.RawMessage) (failureRateAlertInput, string, string) {
	var in failureRateAlertInput
	if trimmed := bytes.TrimSpace(raw); len(trimmed) == 0 || trimmed[0] != '{' {
		return in, "", `must be an object like {"threshold_percent": 20}`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(&in)
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		return in, "", ""
	case errors.As(err, &typ):
		return in, typ.Field, "must be a whole number"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return in, strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`), "is not a known field: threshold_percent, window_hours, min_attempts"
	}
	return in, "", err.Error()
}

// checkFailureRateAlert adds what is wrong with a failure_rate_alert
// field to errs, each problem named by its field
// (failure_rate_alert.threshold_percent).
func (errs *fieldErrors) checkFailureRateAlert(raw json.RawMessage) {
	const field = "failure_rate_alert"
	if noAlert(raw) {
		return
	}
	in, sub, msg := decodeAlert(raw)
	if msg != "" {
		if sub != "" {
			sub = "." + sub
		}
		errs.add(field+sub, "%s", msg)
		return
	}
	switch t := in.ThresholdPercent; {
	case t == nil:
		errs.add(field+".threshold_percent", "is required: the share of failed attempts, in percent, at and above which endpoint.degraded is raised")
	case *t < 1 || *t > domain.MaxAlertThresholdPercent:
		errs.add(field+".threshold_percent", "is %d, must be a whole number of percent from 1 to %d", *t, domain.MaxAlertThresholdPercent)
	}
	if w := in.WindowHours; w != nil && (*w < 1 || *w > domain.MaxAlertWindowHours) {
		errs.add(field+".window_hours", "is %d, must be a whole number of hours from 1 to %d (the counters are hourly: the current hour and that many before it)", *w, domain.MaxAlertWindowHours)
	}
	if m := in.MinAttempts; m != nil && (*m < 1 || *m > domain.MaxAlertMinAttempts) {
		errs.add(field+".min_attempts", "is %d, must be a whole number of attempts from 1 to %d", *m, domain.MaxAlertMinAttempts)
	}
}

// failureRateAlert is a checked failure_rate_alert field as stored: nil
// when absent or null, else the alert with its defaults applied.
func failureRateAlert(raw json.RawMessage) *domain.FailureRateAlert {
	if noAlert(raw) {
		return nil
	}
	in, _, _ := decodeAlert(raw)
	num := func(p *int) int {
		if p == nil {
			return 0 // the default
		}
		return *p
	}
	a := domain.FailureRateAlert{ThresholdPercent: num(in.ThresholdPercent), WindowHours: num(in.WindowHours), MinAttempts: num(in.MinAttempts)}.WithDefaults()
	return &a
}

// failureRateAlertChange is an update's change of the alert: nil when the
// field is absent, the zero alert (removed) when null, else the alert.
func failureRateAlertChange(raw json.RawMessage) *domain.FailureRateAlert {
	if raw == nil {
		return nil
	}
	if a := failureRateAlert(raw); a != nil {
		return a
	}
	return &domain.FailureRateAlert{}
}
