package isolation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/tooling/apiclient"
	"github.com/hookline/hookline/tooling/harness"
	"github.com/hookline/hookline/tooling/perf/pipeline"
)

// The abuse situations (issue 34): a tenant sending what the API still
// accepts at its worst, beside the quiet tenant.
const (
	// HostileFilter is a tenant whose endpoints carry the costliest filter
	// the API accepts (a 100-branch $or on one field, the branches mixing
	// exact, prefix, suffix, anything-but and numeric), publishing events
	// whose payload is about 120 KB of arrays nested as deep as the outbox
	// contract allows, all on the filtered field.
	HostileFilter Situation = "hostile-filter"
	// AtCaps is a tenant at every cap at once: as many endpoints as the
	// stack lets it create, each as large as it may be, every one subscribed
	// to the backlog's type and none answering (the receiver holds each
	// request past the timeout), with a backlog spread over all of them.
	AtCaps Situation = "at-caps"
)

// Abuse defaults.
const (
	HostileEventsDefault    = 60
	HostileEndpointsDefault = 5
	HostilePayloadBytes     = 120 << 10
	// HostileDepthDefault is how deep the hostile payload's arrays nest by
	// default: 2, arrays of one-string arrays, the costliest to match a
	// byte of the depths the outbox accepts (about twice the deepest's:
	// more leaves a byte, each tried against every branch).
	HostileDepthDefault = 2
	CapBacklogDefault   = 20
	// capEndpointsSafety stops the endpoint creation of AtCaps if the stack
	// sets no cap at all (it should: issue 34).
	capEndpointsSafety = 2000
)

// hostileFilter is a 100-branch $or on the field "k", each branch a
// different operator, none of which the hostile payload's leaves match;
// variant v makes its text the endpoint's own (enqueue matches a filter
// text shared by several endpoints once a record, so the worst is a filter
// for each).
func hostileFilter(v int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"$or":[`)
	for i := range 100 {
		if i > 0 {
			b.WriteByte(',')
		}
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, `{"k":["v%02d-%d"]}`, i, v)
		case 1:
			fmt.Fprintf(&b, `{"k":[{"prefix":"p%02d"}]}`, i)
		case 2:
			fmt.Fprintf(&b, `{"k":[{"suffix":"s%02d"}]}`, i)
		case 3:
			fmt.Fprintf(&b, `{"k":[{"numeric":[">",%d]}]}`, 1000000+i)
		default:
			fmt.Fprintf(&b, `{"k":[{"anything-but":{"prefix":"x"}}]}`)
		}
	}
	b.WriteString(`]}`)
	return json.RawMessage(b.String())
}

// hostilePayload is about HostilePayloadBytes of arrays under "k", each a
// chain nested depth-1 deep (the object around them is the first level),
// whose leaves are strings starting with "x" (so no branch above matches),
// some with escapes in them.
func hostilePayload(depth int) string {
	chain := strings.Repeat("[", depth-1) + `"x\u0041\"y"` + strings.Repeat("]", depth-1)
	var b strings.Builder
	b.WriteString(`{"k":[`)
	for i := 0; b.Len() < HostilePayloadBytes; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(chain)
	}
	b.WriteString(`]}`)
	return b.String()
}

// setupHostile creates the hostile tenant's endpoints and writes its events.
func setupHostile(ctx context.Context, e *harness.Env, cfg Config, rcv *Noisy) (*noisyTenant, error) {
	tenant, _, client, err := e.Tenant(ctx, "isohostile", "isolation hostile filter")
	if err != nil {
		return nil, err
	}
	n := &noisyTenant{rcv: rcv, client: client}
	filter := hostileFilter(0)
	for i := range cfg.HostileEndpoints {
		var ep api.EndpointView
		body := map[string]any{"url": fmt.Sprintf("%s/hostile/%d", rcv.URL, i), "event_types": []string{"bench.hostile"}, "filter": hostileFilter(i)}
		if err := client.Do(ctx, "POST", "/v1/endpoints", body, &ep); err != nil {
			return nil, fmt.Errorf("hostile endpoint: %w", err)
		}
		n.endpointIDs = append(n.endpointIDs, ep.ID)
	}
	payload := hostilePayload(cfg.HostileDepth)
	for i := range cfg.HostileEvents {
		n.ids = append(n.ids, fmt.Sprintf("%s_hostile_%04d", tenant, i))
	}
	n.writtenAt = time.Now()
	w := pipeline.Outbox{DB: e.DB, Table: e.Out.OutboxTableName, TenantID: tenant, Type: "bench.hostile", Payload: payload}
	// One event a transaction: 25 such payloads are over a transaction's 4 MB.
	for i := range n.ids {
		if err := w.Write(ctx, n.ids[i:i+1]); err != nil {
			return nil, fmt.Errorf("hostile write: %w", err)
		}
	}
	fmt.Fprintf(cfg.Log, "isolation: %s: %d endpoints with a %d-byte filter, %d events of %d bytes nested %d deep\n",
		HostileFilter, len(n.endpointIDs), len(filter), len(n.ids), len(payload), cfg.HostileDepth)
	return n, nil
}

// capEndpoint is the largest endpoint AtCaps asks for: every header and
// event type it may have, values shrunk until the API takes them.
func capEndpoint(url string, headerBytes, types int) map[string]any {
	headers := map[string]string{}
	for i := range 20 {
		headers[fmt.Sprintf("X-Cap-%02d", i)] = strings.Repeat("h", headerBytes)
	}
	// The fillers are one prefix repeated (the API takes duplicates), so
	// that a stack with an event-type catalog takes them as long as it
	// declares a bench.cap.filler. type (the local stack's does:
	// e2e/testdata/catalog); "bench.cap" matches first either way.
	ts := []string{"bench.cap"}
	for i := 1; i < types; i++ {
		ts = append(ts, "bench.cap.filler.*")
	}
	return map[string]any{"url": url, "event_types": ts, "headers": headers, "description": strings.Repeat("d", 256)}
}

// setupAtCaps creates endpoints until the API refuses one more, each as
// large as it takes, then writes a backlog every endpoint is subscribed to.
func setupAtCaps(ctx context.Context, e *harness.Env, cfg Config, rcv *Noisy) (*noisyTenant, error) {
	tenant, _, client, err := e.Tenant(ctx, "isocaps", "isolation at every cap")
	if err != nil {
		return nil, err
	}
	n := &noisyTenant{rcv: rcv, client: client}
	// The largest shape the API takes: halve what it refuses.
	headerBytes, types := 1024, 50
	for {
		var ep api.EndpointView
		err := client.Do(ctx, "POST", "/v1/endpoints", capEndpoint(rcv.URL+"/cap/0", headerBytes, types), &ep)
		if err == nil {
			n.endpointIDs = append(n.endpointIDs, ep.ID)
			break
		}
		var p *api.Problem
		if !errors.As(err, &p) || p.Status != 400 || (headerBytes == 1 && types == 1) {
			return nil, fmt.Errorf("the first capped endpoint: %w", err)
		}
		headerBytes, types = max(1, headerBytes/2), max(1, types/2)
	}
	var refused error
	for len(n.endpointIDs) < capEndpointsSafety && refused == nil {
		var ep api.EndpointView
		err := client.Do(ctx, "POST", "/v1/endpoints", capEndpoint(fmt.Sprintf("%s/cap/%d", rcv.URL, len(n.endpointIDs)), headerBytes, types), &ep)
		var p *api.Problem
		switch {
		case err == nil:
			n.endpointIDs = append(n.endpointIDs, ep.ID)
		case errors.As(err, &p) && p.Status >= 400 && p.Status < 500 && p.Status != 429:
			refused = err
		default:
			return nil, fmt.Errorf("capped endpoint %d: %w", len(n.endpointIDs), err)
		}
	}
	fmt.Fprintf(cfg.Log, "isolation: %s: %d endpoints (header values %d bytes, %d types each); the next refused: %v\n",
		AtCaps, len(n.endpointIDs), headerBytes, types, refused)
	for i := range cfg.CapBacklog {
		n.ids = append(n.ids, fmt.Sprintf("%s_cap_%04d", tenant, i))
	}
	n.writtenAt = time.Now()
	w := pipeline.Outbox{DB: e.DB, Table: e.Out.OutboxTableName, TenantID: tenant, Type: "bench.cap"}
	if err := w.Write(ctx, n.ids); err != nil {
		return nil, fmt.Errorf("capped backlog: %w", err)
	}
	return n, nil
}

// deleteEndpoints deletes the noisy tenant's endpoints, four at a time, so
// that what is left of its backlog goes dead (endpoint_not_found).
func deleteEndpoints(ctx context.Context, c *apiclient.Client, ids []string) error {
	sem := make(chan struct{}, 4)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var p *api.Problem
			if err := c.Do(ctx, "DELETE", "/v1/endpoints/"+id, nil, nil); err != nil && !(errors.As(err, &p) && p.Status == 404) {
				mu.Lock()
				first = cmpErr(first, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// abuseDrain is AtCaps' drain: every delivery of the backlog (event by
// endpoint) delivered or dead. Its endpoints are deleted once the quiet
// tenant's events are in, so the rest goes dead with endpoint_not_found.
func (n *noisyTenant) abuseDrain(ctx context.Context, cfg Config) (Drain, error) {
	total := len(n.ids) * len(n.endpointIDs)
	d := Drain{Events: total}
	d.Requests, d.MaxInFlight = n.rcv.Requests(), n.rcv.MaxInFlight()
	if err := deleteEndpoints(ctx, n.client, n.endpointIDs); err != nil {
		return d, fmt.Errorf("delete the capped endpoints: %w", err)
	}
	until := time.Now().Add(cfg.DrainWait)
	for {
		dead, err := harness.ListDead(ctx, n.client)
		if err != nil {
			return d, err
		}
		answered := n.rcv.Answered()
		seen := map[string]bool{}
		d.Dead, d.Delivered = 0, 0
		for _, v := range dead {
			if k := v.EventID + "/" + v.EndpointID; !seen[k] {
				seen[k] = true
				d.Dead++
			}
		}
		for range answered {
			d.Delivered++
		}
		if d.Dead+d.Delivered >= total || time.Now().After(until) {
			d.Drained = d.Dead+d.Delivered >= total
			d.Elapsed = time.Since(n.writtenAt)
			fmt.Fprintf(cfg.Log, "isolation: %s: backlog of %d deliveries: %d delivered, %d dead, drained %v after %s; %d requests, at most %d at once\n",
				AtCaps, total, d.Delivered, d.Dead, d.Drained, d.Elapsed.Round(time.Second), d.Requests, d.MaxInFlight)
			return d, nil
		}
		if err := pipeline.SleepUntil(ctx, time.Now().Add(5*time.Second)); err != nil {
			return d, err
		}
	}
}
