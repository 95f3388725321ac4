package domain

import (
	"math"
	"time"
)

// AttemptClass is what became of one sent attempt, as an endpoint's health
// counts it: delivered, or the class of its failure.
type AttemptClass string

const (
	// ClassDelivered: a 2xx answer.
	ClassDelivered AttemptClass = "delivered"
	// ClassTimeout: no answer within the request timeout.
	ClassTimeout AttemptClass = "timeout"
	// ClassNetwork: no answer for another reason (DNS, connection refused
	// or reset, TLS, headers too large, any other transport failure).
	ClassNetwork AttemptClass = "network"
	// ClassHTTP4xx: a 4xx answer other than 429.
	ClassHTTP4xx AttemptClass = "http_4xx"
	// ClassHTTP429: a 429 Too Many Requests answer.
	ClassHTTP429 AttemptClass = "http_429"
	// ClassHTTP5xx: a 5xx answer.
	ClassHTTP5xx AttemptClass = "http_5xx"
	// ClassHTTPOther: any other answer that is not a 2xx (a 3xx: redirects
	// are not followed).
	ClassHTTPOther AttemptClass = "http_other"
	// ClassRefused: the SSRF guard refused the address; nothing was sent.
	ClassRefused AttemptClass = "refused"
)

// FailureClasses lists every failure class, in the order the API shows them.
var FailureClasses = []AttemptClass{ClassTimeout, ClassNetwork, ClassHTTP4xx, ClassHTTP429, ClassHTTP5xx, ClassHTTPOther, ClassRefused}

// LatencyBoundsMS are the upper bounds, in milliseconds, of the latency
// histogram's buckets but the last (which holds everything slower): about
// 1.5x apart, so a percentile read from the histogram is within that
// factor of the true one, and interpolation within a bucket does better.
// Fixed: the stored histograms are counts per bucket index, so changing a
// bound changes the meaning of the stored counts.
var LatencyBoundsMS = [LatencyBuckets - 1]float64{
	1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150, 200, 300, 500, 700,
	1000, 1500, 2000, 3000, 5000, 7000, 10000, 15000, 20000, 30000,
}

// LatencyBuckets is the number of buckets of a LatencyHistogram.
const LatencyBuckets = 28

// LatencyHistogram counts attempts by latency: bucket i holds the
// latencies up to LatencyBoundsMS[i] (and above the bound before it), the
// last bucket those above every bound.
type LatencyHistogram [LatencyBuckets]int64

// LatencyBucket is the index of the bucket that counts latency d.
func LatencyBucket(d time.Duration) int {
	ms := float64(d) / float64(time.Millisecond)
	for i, b := range LatencyBoundsMS {
		if ms <= b {
			return i
		}
	}
	return LatencyBuckets - 1
}

// Percentile estimates the q-quantile (0 < q <= 1) of the latencies
// counted, in milliseconds: the bucket holding the rank, interpolated
// linearly between its bounds (the last bucket answers its lower bound).
// ok is false when nothing is counted.
func (h *LatencyHistogram) Percentile(q float64) (ms float64, ok bool) {
	var n int64
	for _, c := range h {
		n += c
	}
	if n == 0 {
		return 0, false
	}
	rank := int64(math.Ceil(q * float64(n)))
	rank = min(max(rank, 1), n)
	var seen int64
	for i, c := range h {
		if c == 0 || seen+c < rank {
			seen += c
			continue
		}
		lower := 0.0
		if i > 0 {
			lower = LatencyBoundsMS[i-1]
		}
		if i == LatencyBuckets-1 {
			return lower, true
		}
		upper := LatencyBoundsMS[i]
		return lower + (upper-lower)*float64(rank-seen)/float64(c), true
	}
	return 0, false // not reached: rank <= n
}

// AttemptFailure is an endpoint's last failed attempt.
type AttemptFailure struct {
	At time.Time
	// Status is the HTTP status, 0 when no answer came.
	Status int
	// Error is the attempt's error (sender.Result.Error), at most
	// MaxFailureErrorBytes.
	Error string
}

// MaxFailureErrorBytes bounds AttemptFailure.Error as stored.
const MaxFailureErrorBytes = 128

// AttemptStats are an endpoint's attempt counters over some time: an hour's
// bucket, a batch's share of it, or a range's total.
type AttemptStats struct {
	// Attempts counts every attempt sent (or refused by the SSRF guard).
	Attempts int64
	// Delivered counts the 2xx answers.
	Delivered int64
	// Failures counts the failed attempts by class; a class with none may
	// be absent.
	Failures map[AttemptClass]int64
	// Latency is the histogram of the attempts' latencies.
	Latency LatencyHistogram
	// LastSuccessAt is the newest delivered attempt's time, nil with none.
	LastSuccessAt *time.Time
	// LastFailure is the newest failed attempt, nil with none.
	LastFailure *AttemptFailure
}

// Count adds one attempt of class c, latency latency, made at.
func (s *AttemptStats) Count(c AttemptClass, latency time.Duration, at time.Time, status int, errText string) {
	s.Attempts++
	s.Latency[LatencyBucket(latency)]++
	if c == ClassDelivered {
		s.Delivered++
		if s.LastSuccessAt == nil || at.After(*s.LastSuccessAt) {
			s.LastSuccessAt = &at
		}
		return
	}
	if s.Failures == nil {
		s.Failures = map[AttemptClass]int64{}
	}
	s.Failures[c]++
	if s.LastFailure == nil || at.After(s.LastFailure.At) {
		s.LastFailure = &AttemptFailure{At: at, Status: status, Error: truncate(errText, MaxFailureErrorBytes)}
	}
}

// Merge adds o's counts to s and keeps the newer of each last attempt.
func (s *AttemptStats) Merge(o AttemptStats) {
	s.Attempts += o.Attempts
	s.Delivered += o.Delivered
	for c, n := range o.Failures {
		if s.Failures == nil {
			s.Failures = map[AttemptClass]int64{}
		}
		s.Failures[c] += n
	}
	for i, n := range o.Latency {
		s.Latency[i] += n
	}
	if o.LastSuccessAt != nil && (s.LastSuccessAt == nil || o.LastSuccessAt.After(*s.LastSuccessAt)) {
		s.LastSuccessAt = o.LastSuccessAt
	}
	if o.LastFailure != nil && (s.LastFailure == nil || o.LastFailure.At.After(s.LastFailure.At)) {
		s.LastFailure = o.LastFailure
	}
}

// StatsBucket is one hour of an endpoint's attempt counters.
type StatsBucket struct {
	// Start is the hour's start, UTC.
	Start time.Time
	AttemptStats
}

// TypeStatsBucket is one hour of an endpoint's attempts of one event type:
// the counts and latency histogram of an hour bucket, without the newest
// success and failure (kept by the endpoint's StatsBucket only).
type TypeStatsBucket struct {
	// Start is the hour's start, UTC.
	Start time.Time
	// EventType is the type of the events the attempts delivered.
	EventType string
	AttemptStats
}

// StatsHour is the start of the hour bucket that counts an attempt made at t.
func StatsHour(t time.Time) time.Time { return t.UTC().Truncate(time.Hour) }

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
