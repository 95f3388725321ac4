package domain

import (
	"cmp"
	"math"
	"time"
)

// FailureRateAlert is an endpoint's failure-rate alert (issue 38): the
// endpoint is degraded, and endpoint.degraded raised once per episode,
// when over its window at least MinAttempts attempts were sent and at
// least ThresholdPercent of them failed. The consecutive-failure
// thresholds (endpoint.failing) miss an endpoint that fails one attempt in
// four; its rate does not.
type FailureRateAlert struct {
	// ThresholdPercent is the share of failed attempts, 1 to 100, at and
	// above which the endpoint is degraded. Required: no default.
	ThresholdPercent int `dynamodbav:"threshold_percent"`
	// WindowHours is how many whole hours before the current one are
	// weighed beside it, 1 to MaxAlertWindowHours: the counters are hourly
	// buckets (store.AddEndpointStats), so the window is the current
	// hour's bucket and the WindowHours before it, between WindowHours
	// and WindowHours+1 hours of attempts (Window). Default
	// DefaultAlertWindowHours (1).
	WindowHours int `dynamodbav:"window_hours"`
	// MinAttempts is the fewest attempts in the window for the rate to
	// count, 1 to MaxAlertMinAttempts: a window with fewer says nothing
	// (five failures of an endpoint's first six attempts are no trend).
	// Default DefaultAlertMinAttempts (20).
	MinAttempts int `dynamodbav:"min_attempts"`
}

// The limits and defaults of FailureRateAlert's fields.
const (
	// MaxAlertThresholdPercent is the highest ThresholdPercent: every
	// attempt failed.
	MaxAlertThresholdPercent = 100
	// MaxAlertWindowHours is the longest WindowHours: a day, well within
	// the counters' retention (35 days).
	MaxAlertWindowHours = 24
	// MaxAlertMinAttempts is the highest MinAttempts.
	MaxAlertMinAttempts = 10000
	// DefaultAlertWindowHours is WindowHours' default.
	DefaultAlertWindowHours = 1
	// DefaultAlertMinAttempts is MinAttempts' default.
	DefaultAlertMinAttempts = 20
)

// WithDefaults is a with its zero WindowHours and MinAttempts at their
// defaults.
func (a FailureRateAlert) WithDefaults() FailureRateAlert {
	a.WindowHours = cmp.Or(a.WindowHours, DefaultAlertWindowHours)
	a.MinAttempts = cmp.Or(a.MinAttempts, DefaultAlertMinAttempts)
	return a
}

// Window is the range of hour buckets the alert weighs at now: from the
// start of the hour WindowHours before the current one to the end of the
// current one, so never less than WindowHours of attempts (the current
// hour's bucket holds the attempts so far).
func (a FailureRateAlert) Window(now time.Time) (since, until time.Time) {
	hour := StatsHour(now)
	return hour.Add(-time.Duration(a.WithDefaults().WindowHours) * time.Hour), hour.Add(time.Hour)
}

// RateVerdict is what a window's counters say of an endpoint with an
// alert.
type RateVerdict int

const (
	// RateUndecided: fewer than MinAttempts attempts, some failed; the
	// endpoint stays as it was (degraded or not).
	RateUndecided RateVerdict = iota
	// RateDegraded: at least MinAttempts attempts, at least
	// ThresholdPercent of them failed.
	RateDegraded
	// RateHealthy: below ThresholdPercent over at least MinAttempts
	// attempts, or no failure at all: a degraded episode ends.
	RateHealthy
)

// Judge weighs a window of attempts of which failed failed. The rate is
// compared in whole numbers (failed*100 against ThresholdPercent*attempts),
// so 20 % of 100 attempts is 20 failures exactly.
func (a FailureRateAlert) Judge(attempts, failed int64) RateVerdict {
	a = a.WithDefaults()
	switch {
	case failed <= 0:
		return RateHealthy
	case attempts < int64(a.MinAttempts):
		return RateUndecided
	case failed*100 >= int64(a.ThresholdPercent)*attempts:
		return RateDegraded
	}
	return RateHealthy
}

// FailurePercent is failed out of attempts in percent, to two decimals (0
// without attempts): endpoint.degraded's failure_percent.
func FailurePercent(attempts, failed int64) float64 {
	if attempts <= 0 {
		return 0
	}
	return math.Round(float64(failed)*10000/float64(attempts)) / 100
}
