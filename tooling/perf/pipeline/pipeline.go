// Package pipeline measures hookline end to end on the local cloud against
// the local cloud's own floor: the same two hops (a DynamoDB stream to a
// function, an SQS queue to a function) with do-nothing functions (package
// floor), deployed beside the stack and measured in the same run.
//
//   - Latency: outbox write to POST received, one event at a time, floor and
//     hookline interleaved so that machine noise hits both alike.
//   - Burst: a burst of events written at once, and the time until the last
//     one is received, for each.
package pipeline

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Receiver is a loopback HTTP server that records when each id arrived:
// hookline's requests by their X-Event-Id header, the floor's by their body.
// It answers at once, or after the delay SetDelay sets.
type Receiver struct {
	srv   *http.Server
	URL   string
	mu    sync.Mutex
	seen  map[string]time.Time
	wake  chan struct{}
	delay atomic.Int64 // nanoseconds

	inFlight, peak atomic.Int64 // requests being answered; the most at once since TakePeak
}

// TakePeak returns the most requests the receiver was answering at once
// since the last call (or since it started), and starts counting afresh.
// With a delay set, it shows how many the senders had in flight.
func (r *Receiver) TakePeak() int { return int(r.peak.Swap(r.inFlight.Load())) }

// SetDelay makes the receiver answer each request d after it arrived (0:
// at once), as a receiver doing its own work does; the arrival time is
// recorded before the wait.
func (r *Receiver) SetDelay(d time.Duration) { r.delay.Store(int64(d)) }

// NewReceiver listens on 127.0.0.1.
func NewReceiver() (*Receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Receiver{URL: "http://" + ln.Addr().String(), seen: map[string]time.Time{}, wake: make(chan struct{}, 1)}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 5 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	n := r.inFlight.Add(1)
	defer r.inFlight.Add(-1)
	for p := r.peak.Load(); n > p && !r.peak.CompareAndSwap(p, n); p = r.peak.Load() {
	}
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	id := req.Header.Get("X-Event-Id")
	if id == "" {
		id = string(body)
	}
	r.mu.Lock()
	if _, dup := r.seen[id]; !dup {
		r.seen[id] = at
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	if d := time.Duration(r.delay.Load()); d > 0 {
		time.Sleep(d)
	}
	w.WriteHeader(http.StatusNoContent)
}

// Close stops the receiver.
func (r *Receiver) Close() error { return r.srv.Close() }

// WaitAll waits until every id has arrived and returns their arrival times,
// or fails naming how many are missing when timeout passes.
func (r *Receiver) WaitAll(ctx context.Context, ids []string, timeout time.Duration) (map[string]time.Time, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		got := make(map[string]time.Time, len(ids))
		for _, id := range ids {
			if at, ok := r.seen[id]; ok {
				got[id] = at
			}
		}
		r.mu.Unlock()
		if len(got) == len(ids) {
			return got, nil
		}
		select {
		case <-r.wake:
		case <-time.After(50 * time.Millisecond):
		case <-deadline.C:
			return got, fmt.Errorf("%d of %d not received after %s", len(ids)-len(got), len(ids), timeout)
		case <-ctx.Done():
			return got, ctx.Err()
		}
	}
}

// Writer writes events with the given ids: hookline's outbox or the floor's
// table.
type Writer interface {
	Write(ctx context.Context, ids []string) error
}

// Percentiles of a sample.
type Percentiles struct {
	N                  int
	P50, P95, P99, Max time.Duration
}

func percentiles(ds []time.Duration) Percentiles {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	return Percentiles{N: len(s), P50: at(0.50), P95: at(0.95), P99: at(0.99), Max: s[len(s)-1]}
}

// LatencyResult is the outbox-write-to-POST latency of hookline and of the
// floor, measured alternately.
type LatencyResult struct{ Hookline, Floor Percentiles }

// Latency writes n events to each, one at a time, alternating, and waits for
// each to arrive before the next.
func Latency(ctx context.Context, rcv *Receiver, hook, floor Writer, prefix string, n int) (LatencyResult, error) {
	var h, f []time.Duration
	one := func(w Writer, id string) (time.Duration, error) {
		start := time.Now()
		if err := w.Write(ctx, []string{id}); err != nil {
			return 0, err
		}
		got, err := rcv.WaitAll(ctx, []string{id}, 30*time.Second)
		if err != nil {
			return 0, fmt.Errorf("event %s: %w", id, err)
		}
		return got[id].Sub(start), nil
	}
	for i := 0; i < n; i++ {
		d, err := one(floor, fmt.Sprintf("%s_floor_%04d", prefix, i))
		if err != nil {
			return LatencyResult{}, fmt.Errorf("floor: %w", err)
		}
		f = append(f, d)
		if d, err = one(hook, fmt.Sprintf("%s_hook_%04d", prefix, i)); err != nil {
			return LatencyResult{}, fmt.Errorf("hookline: %w", err)
		}
		h = append(h, d)
	}
	return LatencyResult{Hookline: percentiles(h), Floor: percentiles(f)}, nil
}

// Paced writes n events to w, one every every without waiting for any
// (WritePaced), and returns their outbox-write-to-POST latencies once all
// have arrived (each within timeout of the last write): traffic too sparse
// to fill a batch.
func Paced(ctx context.Context, rcv *Receiver, w Writer, prefix string, n int, every, timeout time.Duration) (Percentiles, error) {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s_%04d", prefix, i)
	}
	written, err := WritePaced(ctx, w, ids, every)
	if err != nil {
		return Percentiles{}, err
	}
	got, err := rcv.WaitAll(ctx, ids, timeout)
	if err != nil {
		return Percentiles{}, err
	}
	ds := make([]time.Duration, 0, n)
	for _, id := range ids {
		ds = append(ds, got[id].Sub(written[id]))
	}
	return percentiles(ds), nil
}

// WritePaced writes ids to w one at a time, the i-th every×i after the
// first (on that schedule, whatever a write took), and returns when each
// write began: the time an event's latency is counted from.
func WritePaced(ctx context.Context, w Writer, ids []string, every time.Duration) (map[string]time.Time, error) {
	written := make(map[string]time.Time, len(ids))
	t0 := time.Now()
	for i, id := range ids {
		if err := SleepUntil(ctx, t0.Add(time.Duration(i)*every)); err != nil {
			return written, err
		}
		written[id] = time.Now()
		if err := w.Write(ctx, ids[i:i+1]); err != nil {
			return written, err
		}
	}
	return written, nil
}

// SleepUntil waits until at, or until ctx is done (its error).
func SleepUntil(ctx context.Context, at time.Time) error {
	t := time.NewTimer(time.Until(at))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// BurstResult is how long a burst of events took, from the first write to
// the last arrival.
type BurstResult struct {
	N       int
	Elapsed time.Duration
}

// PerSecond is the burst's throughput in events per second.
func (b BurstResult) PerSecond() float64 { return float64(b.N) / b.Elapsed.Seconds() }

// Burst writes n events as fast as w takes them and waits for all.
func Burst(ctx context.Context, rcv *Receiver, w Writer, prefix string, n int, timeout time.Duration) (BurstResult, error) {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s_%05d", prefix, i)
	}
	start := time.Now()
	if err := w.Write(ctx, ids); err != nil {
		return BurstResult{}, err
	}
	got, err := rcv.WaitAll(ctx, ids, timeout)
	if err != nil {
		return BurstResult{}, err
	}
	var last time.Time
	for _, at := range got {
		if at.After(last) {
			last = at
		}
	}
	return BurstResult{N: n, Elapsed: last.Sub(start)}, nil
}
