package isolation

import (
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Noisy is a troubled webhook receiver on 127.0.0.1: it answers 200 after
// Delay, or, if the client gives up first (a hanging receiver is one whose
// Delay is past the request timeout), not at all. It counts what it got.
type Noisy struct {
	// URL is the receiver's base URL (http://127.0.0.1:port).
	URL   string
	delay time.Duration
	srv   *http.Server

	requests, inFlight, maxInFlight atomic.Int64
	mu                              sync.Mutex
	answered                        map[string]bool // event ids answered 200 while the client waited
}

// NewNoisy listens on 127.0.0.1 and answers each request after delay.
func NewNoisy(delay time.Duration) (*Noisy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	n := &Noisy{URL: "http://" + ln.Addr().String(), delay: delay, answered: map[string]bool{}}
	n.srv = &http.Server{Handler: http.HandlerFunc(n.serve), ReadHeaderTimeout: 5 * time.Second}
	go n.srv.Serve(ln)
	return n, nil
}

func (n *Noisy) serve(w http.ResponseWriter, req *http.Request) {
	n.requests.Add(1)
	cur := n.inFlight.Add(1)
	defer n.inFlight.Add(-1)
	for {
		top := n.maxInFlight.Load()
		if cur <= top || n.maxInFlight.CompareAndSwap(top, cur) {
			break
		}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(req.Body, 1<<20))
	t := time.NewTimer(n.delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-req.Context().Done():
		return // the client went: no answer
	}
	w.WriteHeader(http.StatusOK)
	if id := req.Header.Get("X-Event-Id"); id != "" {
		n.mu.Lock()
		n.answered[id] = true
		n.mu.Unlock()
	}
}

// Answered returns the event ids answered 200 so far.
func (n *Noisy) Answered() map[string]bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make(map[string]bool, len(n.answered))
	for id := range n.answered {
		out[id] = true
	}
	return out
}

// Requests is how many requests have arrived.
func (n *Noisy) Requests() int { return int(n.requests.Load()) }

// MaxInFlight is the most requests the receiver has held at once.
func (n *Noisy) MaxInFlight() int { return int(n.maxInFlight.Load()) }

// Close stops the receiver, dropping the requests it holds.
func (n *Noisy) Close() error { return n.srv.Close() }
