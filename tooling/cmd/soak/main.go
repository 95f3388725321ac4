// Command soak drives events through the stack deployed in the local cloud
// against receivers on 127.0.0.1 that fail at random (5xx, hangs past the
// request timeout, 429 with Retry-After, connection resets, slow answers),
// one of them down altogether, then recover; the deployment itself should inject faults into the
// functions (make soak and make test deploy it with -c faults=...). It then
// checks that every (event, endpoint) pair is accounted for, replays the dead
// ones, and reports. Any lost pair fails the run, with its ids. It is bounded
// in count (-events) and time (-timeout) and stops by itself.
//
// With -kill it is the kill test: it also sends SIGKILL to the local cloud's
// running deliver and enqueue processes while events flow, and prints how
// long each crash victim (a message a killed process held) waited before it
// was tried again. Every receipt's signature is verified with the endpoint's
// secret, and every pair must arrive under its own webhook-id.
//
// Beside the HTTP receivers, -destinations (default sqs,sns,eventbridge)
// adds an endpoint of each AWS destination type at one customer's account
// on the local cloud, read back from there and held to the same checks.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/outbox"
	"github.com/hookline/hookline/tooling/harness"
)

func main() {
	events := flag.Int("events", 300, "events to write")
	endpoints := flag.Int("endpoints", 2, "endpoints (each a chaotic receiver) every event goes to")
	chaos := flag.Duration("chaos", 30*time.Second, "how long the receivers fail at random before they recover")
	flag.Float64Var(&rate, "rate", 0, "events written per second, in transactions of up to 25 (0: all at once); a steady rate keeps the local cloud's queues short, as production traffic would")
	timeout := flag.Duration("timeout", 10*time.Minute, "the whole run stops after this")
	flag.DurationVar(&settle, "settle", 5*time.Minute, "how long a delivery may take to reach a terminal state before it counts as lost")
	flag.DurationVar(&killEvery, "kill", 0, "the kill test: SIGKILL the local cloud's deliver and enqueue processes this often while events flow (0: never)")
	flag.DurationVar(&killFor, "kill-for", 30*time.Second, "with -kill: how long the kills go on from the first write")
	flag.StringVar(&destinations, "destinations", "sqs,sns,eventbridge", "AWS destination types that get an endpoint each beside the HTTP ones, at one customer's account on the local cloud (empty: none; the default is one of each)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, *events, *endpoints, *chaos); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

// receipt is one request a receiver answered.
type receipt struct {
	webhookID, eventID string
	ok                 bool
	at                 time.Time
	attempt            int  // X-Attempt
	signed             bool // the signature verified with the endpoint's secret
}

// chaotic is a receiver that fails at random (or, when down, always) until
// it recovers.
type chaotic struct {
	srv *httptest.Server
	// path is the receiver's own: its endpoint's URL is srv.URL + path.
	// A request to another path is a stray, a delivery to an endpoint of
	// an earlier test whose receiver had this port before this one
	// (ports are reused, and the local cloud outlives each test): it is
	// answered 404 and counted apart, never as a receipt of the soak.
	path   string
	strays atomic.Int64
	// cut counts requests whose body did not arrive whole (the sender was
	// killed while it sent): no receiver gets such a request, and the
	// sender, not having its answer, tries the delivery again.
	cut      atomic.Int64
	down     bool
	healthy  atomic.Bool
	verifier atomic.Pointer[signing.Verifier]
	mu       sync.Mutex
	receipts []receipt
	faults   map[string]int
}

func newChaotic(down bool) *chaotic {
	c := &chaotic{faults: map[string]int{}, down: down, path: fmt.Sprintf("/hook/%016x", rand.Uint64())}
	c.srv = httptest.NewServer(http.HandlerFunc(c.serve))
	return c
}

func (c *chaotic) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != c.path {
		c.strays.Add(1)
		http.NotFound(w, r)
		return
	}
	fault := "ok"
	if !c.healthy.Load() {
		p := rand.Float64()
		if c.down {
			p = 0 // down until it recovers: its deliveries die, and are replayed
		}
		switch {
		case p < 0.12:
			fault = "5xx"
		case p < 0.15:
			fault = "hang"
		case p < 0.20:
			fault = "429"
		case p < 0.24:
			fault = "reset"
		case p < 0.34:
			fault = "slow"
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		c.cut.Add(1)
		return
	}
	signed := false
	if v := c.verifier.Load(); v != nil {
		signed = v.VerifyRequest(r.Header, body) == nil
	}
	attempt, _ := strconv.Atoi(r.Header.Get("X-Attempt"))
	c.mu.Lock()
	c.faults[fault]++
	c.receipts = append(c.receipts, receipt{webhookID: r.Header.Get("webhook-id"), eventID: r.Header.Get("X-Event-Id"), ok: fault == "ok" || fault == "slow",
		at: time.Now(), attempt: attempt, signed: signed})
	c.mu.Unlock()
	switch fault {
	case "5xx":
		w.WriteHeader([]int{500, 502, 503}[rand.IntN(3)])
	case "hang":
		time.Sleep(4 * time.Second) // past the local 3 s request timeout
		w.WriteHeader(200)
	case "429":
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
	case "reset":
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				if tcp, ok := conn.(*net.TCPConn); ok {
					_ = tcp.SetLinger(0)
				}
				conn.Close()
				return
			}
		}
		w.WriteHeader(500)
	case "slow":
		time.Sleep(300 * time.Millisecond)
		w.WriteHeader(200)
	default:
		w.WriteHeader(200)
	}
}

type pair struct {
	tenant, event, endpoint string
	at                      time.Time // the event's occurred_at, which names its deliveries
}

var (
	settle             time.Duration
	rate               float64
	killEvery, killFor time.Duration
)

func run(ctx context.Context, nEvents, nEndpoints int, chaos time.Duration) error {
	e, err := harness.Load(ctx)
	if err != nil {
		return err
	}
	out, db := e.Out, e.DB
	st := store.New(db, out.StateTableName)
	tenant, _, client, err := e.Tenant(ctx, "soak", "soak")
	if err != nil {
		return err
	}
	receivers := map[string]*chaotic{}
	for i := 0; i < nEndpoints; i++ {
		c := newChaotic(i == 0 && nEndpoints > 1)
		defer c.srv.Close()
		var ep api.EndpointView
		if err := client.Do(ctx, "POST", "/v1/endpoints", map[string]string{"url": c.srv.URL + c.path}, &ep); err != nil {
			return err
		}
		v, err := signing.NewVerifier(ep.Secret)
		if err != nil {
			return fmt.Errorf("endpoint %s: %w", ep.ID, err)
		}
		c.verifier.Store(v)
		receivers[ep.ID] = c
	}
	kinds, err := parseDestinations(destinations)
	if err != nil {
		return err
	}
	inboxes, err := addDestinations(ctx, e, client, kinds, receivers)
	if err != nil {
		return err
	}
	fmt.Printf("soak: %d events x %d endpoints (%d HTTP, AWS destinations %v), HTTP receivers chaotic for %s, tenant %s\n", nEvents, len(receivers), nEndpoints, kinds, chaos, tenant)

	start := time.Now()
	written := make(map[string]time.Time, nEvents)
	var kills *killer
	if killEvery > 0 {
		kills = newKiller(map[string]string{out.DeliverFunctionName: "deliver", out.EnqueueFunctionName: "enqueue"}, killEvery)
		killCtx, stop := context.WithTimeout(ctx, killFor)
		defer stop()
		go kills.run(killCtx)
		fmt.Printf("kill: SIGKILL to the deliver and enqueue processes every %s for %s\n", killEvery, killFor)
	}
	// The receivers recover chaos after the first write, while events may
	// still be being written (-rate).
	go func() {
		select {
		case <-time.After(time.Until(start.Add(chaos))):
		case <-ctx.Done():
		}
		for _, c := range receivers {
			c.healthy.Store(true)
		}
		fmt.Printf("  receivers recovered after %s\n", time.Since(start).Round(time.Second))
	}()
	var pairs []pair
	for i := 0; i < nEvents; i += 25 {
		if rate > 0 {
			// Hold the pace: event i goes out no earlier than i/rate seconds in.
			if wait := time.Until(start.Add(time.Duration(float64(i) / rate * float64(time.Second)))); wait > 0 {
				time.Sleep(wait)
			}
			if i > 0 && i%2500 == 0 {
				fmt.Printf("  wrote %d events after %s\n", i, time.Since(start).Round(time.Second))
			}
		}
		var items []types.TransactWriteItem
		at := time.Now()
		for k := i; k < min(nEvents, i+25); k++ {
			id := fmt.Sprintf("%s_evt_%06d", tenant, k)
			put, err := outbox.TransactPut(out.OutboxTableName, outbox.Event{ID: id, TenantID: tenant, Type: "soak.event",
				Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, k)), OccurredAt: at})
			if err != nil {
				return err
			}
			items = append(items, put)
			written[id] = at
			for ep := range receivers {
				pairs = append(pairs, pair{tenant, id, ep, at})
			}
		}
		if _, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items}); err != nil {
			return fmt.Errorf("write events: %w", err)
		}
	}
	fmt.Printf("  wrote %d events in %s\n", nEvents, time.Since(start).Round(time.Millisecond))

	// Every pair reaches a terminal state.
	final, stuck := waitTerminal(ctx, st, pairs, settle, nil)
	var lost []string
	for _, p := range stuck {
		lost = append(lost, fmt.Sprintf("%s (event %s, endpoint %s) never reached a terminal state", domain.DeliveryID(p.tenant, p.event, p.endpoint, p.at), p.event, p.endpoint))
	}
	var dead []pair
	longest := time.Duration(0)
	attempts := 0
	for p, d := range final {
		attempts += d.Attempts
		end := d.DeliveredAt
		if d.State == domain.StateDead {
			dead = append(dead, p)
			end = d.DeadAt
		}
		if end != nil {
			longest = max(longest, end.Sub(written[p.event]))
		}
	}
	fmt.Printf("  %d of %d deliveries terminal after %s: %d delivered, %d dead\n", len(final), len(pairs), time.Since(start).Round(time.Second), len(final)-len(dead), len(dead))

	// The dead ones are all in the tenant's DLQ listing.
	deadList, err := harness.ListDead(ctx, client)
	if err != nil {
		return err
	}
	listed := map[string]bool{}
	for _, d := range deadList {
		listed[d.ID] = true
	}
	for _, p := range dead {
		id := domain.DeliveryID(p.tenant, p.event, p.endpoint, p.at)
		if listed[id] {
			continue
		}
		// Deliver records a death before a last attempt, and that attempt's
		// outcome replaces it: a record read dead in between may be
		// delivered by now, and so rightly not listed. Only one still dead
		// and not listed is lost.
		if snap, err := st.Load(ctx, []string{id}, nil); err == nil && snap.Deliveries[id].State == domain.StateDelivered {
			final[p] = snap.Deliveries[id]
			continue
		}
		lost = append(lost, "dead but not listed: "+id)
	}

	// Replay brings them home.
	replayStart := time.Now()
	for _, c := range receivers {
		c.healthy.Store(true)
	}
	replayed := 0
	if len(dead) > 0 {
		for ep := range receivers {
			// An endpoint disabled by failures is enabled again first.
			_ = client.Do(ctx, "POST", "/v1/endpoints/"+ep+"/enable", nil, nil)
		}
		var job api.JobView
		if err := client.Do(ctx, "POST", "/v1/dlq/replay", map[string]string{"event_type": "soak.event"}, &job); err != nil {
			return err
		}
		for job.Status != domain.StatusCompleted {
			if ctx.Err() != nil {
				return fmt.Errorf("replay job %s did not complete: %w", job.ID, ctx.Err())
			}
			time.Sleep(time.Second)
			if err := client.Do(ctx, "GET", "/v1/replays/"+job.ID, nil, &job); err != nil {
				return err
			}
		}
		replayed = job.Replayed
		again, _ := waitTerminal(ctx, st, dead, settle, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
		for p, d := range again {
			final[p] = d
		}
	}

	// Every pair delivered, and received with its own webhook-id.
	inboxes.drain(ctx)
	got := map[string]int{}
	mismatch, unsigned := 0, 0
	var all []receipt
	for ep, c := range receivers {
		c.mu.Lock()
		for _, r := range c.receipts {
			if r.webhookID != domain.DeliveryID(tenant, r.eventID, ep, written[r.eventID]) {
				mismatch++
			}
			if !r.signed {
				unsigned++
			}
			if r.ok && r.signed {
				got[r.webhookID]++
			}
		}
		all = append(all, c.receipts...)
		c.mu.Unlock()
	}
	duplicates := 0
	for _, p := range pairs {
		id := domain.DeliveryID(p.tenant, p.event, p.endpoint, p.at)
		switch {
		case final[p].State == "":
			// counted as stuck above
		case final[p].State != domain.StateDelivered:
			lost = append(lost, fmt.Sprintf("%s (event %s, endpoint %s) ended %s", id, p.event, p.endpoint, final[p].State))
		case got[id] == 0:
			lost = append(lost, fmt.Sprintf("%s (event %s, endpoint %s) recorded delivered, never received", id, p.event, p.endpoint))
		default:
			duplicates += got[id] - 1
		}
	}
	faults := map[string]int{}
	var strays, cut int64
	for _, c := range receivers {
		for f, n := range c.faults {
			faults[f] += n
		}
		strays += c.strays.Load()
		cut += c.cut.Load()
	}
	if cut > 0 {
		fmt.Printf("      %d requests whose body did not arrive whole (the sender killed while it sent), not counted: their deliveries were tried again\n", cut)
	}
	if strays > 0 {
		fmt.Printf("      %d stray requests to a receiver's port but not its path (an earlier test's endpoint on a reused port), answered 404 and not counted\n", strays)
	}
	fmt.Printf("soak: events %d, deliveries %d, attempts %d, dead %d, replayed %d, lost %d, duplicate receipts %d (all with the first receipt's webhook-id: %t), longest time to a terminal state %s\n",
		nEvents, len(pairs), attempts, len(dead), replayed, len(lost), duplicates, mismatch == 0, longest.Round(100*time.Millisecond))
	fmt.Printf("      receivers answered: %v; whole run %s\n", faults, time.Since(start).Round(time.Second))
	if mismatch > 0 {
		lost = append(lost, fmt.Sprintf("%d receipts carried a webhook-id that is not their delivery's", mismatch))
	}
	if unsigned > 0 {
		lost = append(lost, fmt.Sprintf("%d receipts did not verify with the endpoint's secret", unsigned))
	}
	if kills != nil {
		reportKills(kills, crashVictims(all, kills, replayStart))
		if kills.counts()["deliver"] == 0 {
			lost = append(lost, "the kill test killed no deliver process: it proved nothing")
		}
	}
	if len(lost) > 0 {
		sort.Strings(lost)
		for _, l := range lost[:min(len(lost), 50)] {
			fmt.Println("  LOST:", l)
		}
		return fmt.Errorf("%d of %d deliveries lost", len(lost), len(pairs))
	}
	return nil
}

// waitTerminal polls the deliveries until each is terminal (delivered or
// dead), or until done says so, reading in parallel; it returns the pairs
// still not there when settle has passed: lost.
func waitTerminal(ctx context.Context, st *store.Store, pairs []pair, settle time.Duration, done func(domain.Delivery) bool) (map[pair]domain.Delivery, []pair) {
	deadline := time.Now().Add(settle)
	if done == nil {
		done = func(d domain.Delivery) bool {
			return d.State == domain.StateDelivered || d.State == domain.StateDead
		}
	}
	final := map[pair]domain.Delivery{}
	var mu sync.Mutex
	left := pairs
	for len(left) > 0 {
		if ctx.Err() != nil || time.Now().After(deadline) {
			return final, left
		}
		var next []pair
		sem := make(chan struct{}, 4)
		var wg sync.WaitGroup
		for start := 0; start < len(left); start += 100 {
			chunk := left[start:min(len(left), start+100)]
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				ids := make([]string, len(chunk))
				for i, p := range chunk {
					ids[i] = domain.DeliveryID(p.tenant, p.event, p.endpoint, p.at)
				}
				snap, err := st.Load(ctx, ids, nil)
				mu.Lock()
				defer mu.Unlock()
				for i, p := range chunk {
					if d, ok := snap.Deliveries[ids[i]]; err == nil && ok && done(d) {
						final[p] = d
					} else {
						next = append(next, p)
					}
				}
			}()
		}
		wg.Wait()
		left = next
		if len(left) > 0 {
			// Poll less often when many are left: the reads load the same
			// local cloud the pipeline runs on.
			time.Sleep(time.Duration(2+len(left)/2000) * time.Second)
		}
	}
	return final, nil
}
