package apiabuse

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/netguard"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/sealing/sealingtest"
	"github.com/hookline/hookline/internal/store/storefake"
	"github.com/hookline/hookline/tooling/perf/isolation"
)

// The model of the deployed API these tests and the benchmark run Run
// against, in process, on 127.0.0.1: the real api.Server (routes,
// authentication, the per-tenant limit) on the in-memory store, with
//
//   - the api function's reserved executions: 20 slots; a request that
//     finds none is throttled as Lambda does (API Gateway answers 503);
//   - a hop of modelHop each way outside the slot (API Gateway and the
//     Lambda service), and store calls costing DynamoDB-like times:
//     1 ms a key read or a window write, 10 ms a listing page, 5 ms an
//     endpoint's stats.
const (
	modelSlots = 20
	modelHop   = 5 * time.Millisecond
)

// slowStore is the store on the fake table (storefake) with the model's latencies.
type slowStore struct{ *storefake.Store }

func pause(d time.Duration) { time.Sleep(d) }

func (s slowStore) TenantForKey(ctx context.Context, hash string) (string, error) {
	pause(time.Millisecond)
	return s.Store.TenantForKey(ctx, hash)
}

func (s slowStore) TakeAPIRequest(ctx context.Context, tenantID string, at time.Time, limit int) (bool, error) {
	pause(time.Millisecond)
	return s.Store.TakeAPIRequest(ctx, tenantID, at, limit)
}

func (s slowStore) ListEndpoints(ctx context.Context, tenantID string, limit int, cursor string) ([]domain.Endpoint, string, error) {
	pause(10 * time.Millisecond)
	return s.Store.ListEndpoints(ctx, tenantID, limit, cursor)
}

func (s slowStore) ListDead(ctx context.Context, tenantID string, f domain.DeadFilter, limit int, cursor string) ([]domain.Delivery, string, error) {
	pause(10 * time.Millisecond)
	return s.Store.ListDead(ctx, tenantID, f, limit, cursor)
}

func (s slowStore) ListDeliveries(ctx context.Context, tenantID string, f domain.DeliveryFilter, limit int, cursor string) ([]domain.Delivery, string, error) {
	pause(10 * time.Millisecond)
	return s.Store.ListDeliveries(ctx, tenantID, f, limit, cursor)
}

func (s slowStore) EndpointTypeStats(ctx context.Context, tenantID, endpointID string, since, until time.Time) ([]domain.TypeStatsBucket, error) {
	pause(5 * time.Millisecond)
	return s.Store.EndpointTypeStats(ctx, tenantID, endpointID, since, until)
}

func (s slowStore) DLQDepths(ctx context.Context) (map[string]int, error) {
	pause(time.Millisecond)
	return s.Store.DLQDepths(ctx)
}

// slowLog is the message log with a listing page's cost.
type slowLog struct{ *storefake.MessageLog }

func (l slowLog) ListEvents(ctx context.Context, tenantID string, f domain.EventFilter, limit int, cursor string) ([]domain.Event, string, error) {
	pause(10 * time.Millisecond)
	return l.MessageLog.ListEvents(ctx, tenantID, f, limit, cursor)
}

// modelAPI serves the model with the per-tenant rate (negative: none) and
// answers its URL, the quiet and noisy tenants' keys and the operator's.
func modelAPI(tb testing.TB, rate int) (url, quiet, noisy, operator string) {
	tb.Helper()
	const op = "op_model_key_0123456789"
	srv := &api.Server{
		Store: slowStore{storefake.New()}, OperatorKey: op, URLs: netguard.URLPolicy{}, Rand: rand.Reader,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), MessageLog: slowLog{storefake.NewMessageLog()},
		TenantExpensiveRate: rate, Sealer: &sealing.Sealer{KMS: sealingtest.New(), KeyID: sealingtest.KeyARN},
	}
	h := srv.Handler()
	slots := make(chan struct{}, modelSlots)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pause(modelHop)
		defer pause(modelHop)
		select {
		case slots <- struct{}{}:
		default:
			http.Error(w, `{"message":"Service Unavailable"}`, http.StatusServiceUnavailable) // Lambda throttled
			return
		}
		defer func() { <-slots }()
		h.ServeHTTP(w, r)
	}))
	tb.Cleanup(ts.Close)
	tenant := func(id string, endpoints int) string {
		var key api.KeyView
		post(tb, ts.URL+"/v1/admin/tenants", op, map[string]string{"tenant_id": id, "name": id}, nil)
		post(tb, ts.URL+"/v1/admin/tenants/"+id+"/keys", op, nil, &key)
		for i := range endpoints {
			post(tb, ts.URL+"/v1/endpoints", key.Key, map[string]any{"url": fmt.Sprintf("https://hooks.example.com/%d", i), "event_types": []string{"a.b"}}, nil)
		}
		return key.Key
	}
	return ts.URL, tenant("quiet", 1), tenant("noisy", 20), op
}

func post(tb testing.TB, url, key string, body, out any) {
	tb.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url, strings.NewReader(string(raw)))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		tb.Fatalf("POST %s: %d %s", url, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestRunCountsEverySide: a small run on the model takes every quiet and
// operator request it says, in both situations, and counts the flood's
// answers, among them the limit's 429s.
func TestRunCountsEverySide(t *testing.T) {
	url, quiet, noisy, op := modelAPI(t, 2)
	res, err := Run(context.Background(), Config{BaseURL: url, QuietKey: quiet, NoisyKey: noisy, OperatorKey: op,
		Requests: 8, Rounds: 2, Flood: 4, Pace: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]isolation.Sample{"quiet alone": res.QuietAlone, "quiet beside": res.QuietBeside,
		"operator alone": res.OperatorAlone, "operator beside": res.OperatorBeside} {
		if s.N() != 8 {
			t.Errorf("%s: %d requests, want 8", name, s.N())
		}
	}
	if res.Noisy[http.StatusTooManyRequests] == 0 {
		t.Errorf("the flood met no 429 at 2 a second: %v", res.Noisy)
	}
}

// BenchmarkQuietBesideFlood runs the abuse section on the model, with the
// per-tenant limit at its default and with none, and reports the quiet
// tenant's and the operator's p95 beside the flood as a multiple of alone
// (same run), and the quiet requests lost (throttled) beside the flood:
//
//	go test -run '^$' -bench QuietBesideFlood -benchtime 1x ./tooling/perf/apiabuse/
func BenchmarkQuietBesideFlood(b *testing.B) {
	for _, c := range []struct {
		name string
		rate int
	}{{"limit=default", 0}, {"limit=none", -1}} {
		b.Run(c.name, func(b *testing.B) {
			url, quiet, noisy, op := modelAPI(b, c.rate)
			for range b.N {
				res, err := Run(context.Background(), Config{BaseURL: url, QuietKey: quiet, NoisyKey: noisy, OperatorKey: op,
					Requests: 30, Rounds: 3})
				if err != nil {
					b.Fatal(err)
				}
				report(b, "quiet", res.QuietAlone, res.QuietBeside)
				report(b, "operator", res.OperatorAlone, res.OperatorBeside)
				b.ReportMetric(float64(res.Noisy[http.StatusTooManyRequests]), "flood-429s")
				b.Logf("%s: %s", c.name, res.Describe())
			}
		})
	}
}

// report reports who's p95 beside against alone (x), its p95s in ms, and
// how many of its requests were lost beside the flood.
func report(b *testing.B, who string, alone, beside isolation.Sample) {
	a, aok := alone.Percentile(0.95)
	f, fok := beside.Percentile(0.95)
	b.ReportMetric(float64(beside.Missing), who+"-lost")
	if aok && fok {
		b.ReportMetric(float64(a.Microseconds())/1000, who+"-p95-alone-ms")
		b.ReportMetric(float64(f.Microseconds())/1000, who+"-p95-beside-ms")
		b.ReportMetric(f.Seconds()/a.Seconds(), who+"-p95-x")
	}
}
