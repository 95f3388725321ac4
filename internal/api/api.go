package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hookline/hookline/internal/apikey"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/eventtypes"
	"github.com/hookline/hookline/internal/netguard"
	"github.com/hookline/hookline/internal/retry"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/trace"
)

// Store is what the API needs of the state table: one interface composed
// of the small ports below, each declared here; a *store.Store in
// production (the wiring passes it once), on a fake table in the tests
// (storefake).
type Store interface {
	Tenants
	Endpoints
	EndpointCounts
	EndpointChanges
	Deliveries
	DeliveryLog
	DeadLetters
	Jobs
	Stats
	Erasures
	PortalLinks
	APIRates
}

// Tenants are the tenants and their API keys: the operator creates them,
// every tenant request is authenticated by a key's hash.
type Tenants interface {
	TenantForKey(ctx context.Context, hash string) (string, error)
	CreateTenant(ctx context.Context, t domain.Tenant) (domain.Tenant, error)
	PutAPIKey(ctx context.Context, k domain.APIKey) (domain.APIKey, error)
	RevokeAPIKey(ctx context.Context, tenantID, keyID string) error
}

// Endpoints creates, reads, lists and deletes a tenant's endpoints.
type Endpoints interface {
	CreateEndpoint(ctx context.Context, e domain.Endpoint) (domain.Endpoint, error)
	Endpoint(ctx context.Context, tenantID, endpointID string) (domain.Endpoint, error)
	ListEndpoints(ctx context.Context, tenantID string, limit int, cursor string) ([]domain.Endpoint, string, error)
	DeleteEndpoint(ctx context.Context, tenantID, endpointID string) error
}

// EndpointCounts counts a tenant's endpoints up to a bound, strongly
// consistent: the endpoints_per_tenant cap (caps.go).
type EndpointCounts interface {
	CountEndpoints(ctx context.Context, tenantID string, upTo int) (int, error)
}

// EndpointChanges changes an existing endpoint: its fields, its signing
// secret, whether it is enabled. Each is one conditional write (a field
// change never loses a concurrent failure count or rotation).
type EndpointChanges interface {
	UpdateEndpoint(ctx context.Context, tenantID, endpointID string, c store.EndpointChange) (domain.Endpoint, error)
	RotateSecret(ctx context.Context, tenantID, endpointID string, r store.Rotation) (domain.Endpoint, error)
	SetEndpointEnabled(ctx context.Context, tenantID, endpointID string, enabled bool) (domain.Endpoint, error)
}

// Deliveries reads deliveries: one by id, or an event's.
type Deliveries interface {
	Delivery(ctx context.Context, id string) (domain.Delivery, error)
	DeliveriesOfEvent(ctx context.Context, tenantID string, ev domain.Event) ([]domain.Delivery, error)
	DeliveriesOfEvents(ctx context.Context, tenantID string, events []domain.Event) (map[string][]domain.Delivery, error)
}

// DeliveryLog lists a tenant's deliveries by filter, newest first (the
// store's delivery log index).
type DeliveryLog interface {
	ListDeliveries(ctx context.Context, tenantID string, f domain.DeliveryFilter, limit int, cursor string) ([]domain.Delivery, string, error)
}

// DeadLetters lists a tenant's dead deliveries and counts every tenant's.
type DeadLetters interface {
	ListDead(ctx context.Context, tenantID string, f domain.DeadFilter, limit int, cursor string) ([]domain.Delivery, string, error)
	DLQDepths(ctx context.Context) (map[string]int, error)
}

// Jobs reads jobs of every kind (Server.Jobs starts them).
type Jobs interface {
	Job(ctx context.Context, id string) (domain.Job, error)
}

var _ Store = (*store.Store)(nil)

// Sealer seals the signing secrets the API creates (package sealing). The
// API can seal a secret, never open one: a secret is shown once, in the
// answer that created it.
type Sealer interface {
	Seal(ctx context.Context, ref sealing.Ref, secret string) (string, error)
}

// Server holds the API's dependencies. Build it with a literal; Handler
// returns the router.
type Server struct {
	Store Store
	// OperatorKey reaches the admin routes. Empty: the key OperatorKeyFunc
	// gives; with OperatorKeyFunc nil too, no admin access at all.
	OperatorKey string
	// OperatorKeyFunc gives the operator key when OperatorKey is empty (it
	// reads a secret store, say). The first request to an admin route that
	// carries a bearer token calls it, not before; a key it gives without an
	// error is kept for OperatorKeyTTL, and the first admin request after
	// that calls it again, so a rotated key takes effect within the TTL. An
	// error, or an empty key, answers that request 503 (the old key is not
	// trusted past its TTL) and the next one calls it again. Nil:
	// OperatorKey only.
	OperatorKeyFunc func(ctx context.Context) (string, error)
	// OperatorKeyTTL is how long a key OperatorKeyFunc gave is kept.
	// Default DefaultOperatorKeyTTL (1 min).
	OperatorKeyTTL time.Duration
	// OperatorCaller, when set, authenticates the operator routes in place
	// of the operator key: it reports whether r is the operator's and
	// names its caller for the log. The api function sets it when API
	// Gateway authorizes those routes by IAM (fnenv.APIEnv.OperatorIAM):
	// a request that reaches the function carries the identity API Gateway
	// verified. Nil (the default): the operator key.
	OperatorCaller func(r *http.Request) (callerID string, ok bool)
	// fetched is the key OperatorKeyFunc gave, and when.
	fetched struct {
		mu  sync.Mutex
		key string
		at  time.Time
	}
	// Notify keeps the tenants' notification addresses (a *store.Store,
	// the same as Store). Nil: the notification routes answer 409, as
	// without Notices.
	Notify NotifyStore
	// Notices sends the verification e-mails of notification addresses (a
	// *notify.Mailer). Nil: the stack has no SES identity, and naming an
	// address answers 409.
	Notices Verifier
	// Sealer seals new signing secrets before they are stored. Nil: creating
	// an endpoint or rotating its secret answers 500.
	Sealer Sealer
	// URLs checks endpoint URLs at registration (https only by default).
	URLs netguard.URLPolicy
	// EgressIPs are the addresses deliveries leave from with static
	// egress, which GET /v1/egress-ips shows tenants (egress.go). Nil:
	// AWS's shared ranges.
	EgressIPs []string
	// Destinations are the AWS destinations registration accepts (the
	// regions, the stack's partition and account, hookline's own
	// resources refused). Zero value: none.
	Destinations DestinationRules
	// Retry is the stack's retry policy (the deliver function's): an
	// endpoint's own retry_schedule is held to its attempts (the queue's
	// maxReceiveCount) and age cap. Zero value: the documented defaults.
	Retry retry.Policy
	// MaxRequestTimeout is the longest timeout_seconds an endpoint may
	// set: the deliver function's timeout is sized for it. Default
	// domain.DefaultRequestTimeout (15 s).
	MaxRequestTimeout time.Duration
	// Caps are the tenant caps the API enforces (caps.go). Zero fields:
	// their defaults.
	Caps Caps
	// MessageLog reads the message log (the outbox table). Nil: the event
	// routes answer 503.
	MessageLog MessageLog
	// PayloadRetention is how long after its occurred_at an event's payload
	// is served: GET /v1/events/{event_id} answers an older event without
	// its payload. Default DefaultPayloadRetention (15 days).
	PayloadRetention time.Duration
	// DeliveryQueue and DeliveryQueueURL receive the resends of delivered
	// deliveries. Nil: such a resend answers 503.
	DeliveryQueue    DeliveryQueue
	DeliveryQueueURL string
	// Jobs starts the jobs of every kind: replays, cancels, the operator's
	// redrive and erasures. Nil: the routes that start one answer 503.
	Jobs JobStarter
	// Outbox is the outbox table, named OutboxTable, that POST /v1/events
	// and POST /v1/endpoints/{id}/test write events into. Nil: those routes
	// answer 503.
	Outbox      Outbox
	OutboxTable string
	// EventTypes is the stack's event-type catalog (eventtypes.Open):
	// GET /v1/event-types lists it, endpoints' event_types must name its
	// types, and a test event may be one of them with its example. Nil:
	// no catalog, any event type may be subscribed to.
	EventTypes *eventtypes.Catalog
	// Rand is the randomness for ids, keys and secrets (crypto/rand.Reader).
	Rand io.Reader
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Log gets one line per request and the causes of 500s. Default
	// slog.Default().
	Log *slog.Logger
	// Tracer emits the spans of a publish ("api.publish") and a resend
	// ("api.resend"). Nil: none emitted; the trace context still travels.
	Tracer *trace.Tracer
	// Console is the console's files, served at /console/ (index.html,
	// app.js, app.css). Default console.Assets(), the embedded console.
	Console fs.FS
	// ConsoleHello is the page-weight baseline served at /console-hello/.
	// Default console.HelloAssets().
	ConsoleHello fs.FS
	// Alarms reads the stack's alarms, those whose names start with
	// AlarmNamePrefix, for GET /v1/admin/alarms. Nil or no prefix: that
	// route answers 503 "alarms cannot be read here".
	Alarms          Alarms
	AlarmNamePrefix string
	// PortalMinTTL is the shortest life of a portal link (ttl_seconds).
	// Default 1 min; the local cloud's deployment lowers it.
	PortalMinTTL time.Duration
	// TenantExpensiveRate is the most expensive requests (Route.Expensive)
	// a second one tenant may make, counted across every execution
	// environment (APIRates); over it, 429. Default
	// DefaultTenantExpensiveRate (5); negative: no limit. tenantlimit.go.
	TenantExpensiveRate int
	// ExpensiveBudget is the longest an expensive request may run; one
	// that runs over it is stopped and answered 503. Default
	// DefaultExpensiveBudget (2 s); negative: none.
	ExpensiveBudget time.Duration
	// refused remembers the windows in which a tenant was refused.
	refused refusals
	// FrameAncestors may frame the console: the CSP's frame-ancestors
	// sources, checked by fnenv.ParseFrameAncestors. Default nil: 'none'.
	FrameAncestors []string
}

func (s *Server) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// maxIDBytes bounds an id taken from the path. Every id hookline makes is
// far shorter, and the table refuses key values over 1024 bytes (sort key)
// or 2048 (partition key) with an error that would otherwise answer 500.
const maxIDBytes = 256

// tooLongID answers 404 when a path value of rt is over maxIDBytes: no such
// resource can exist.
func tooLongID(rt Route, r *http.Request) *Problem {
	for rest := rt.Path; ; {
		i := strings.IndexByte(rest, '{')
		j := strings.IndexByte(rest, '}')
		if i < 0 || j < i {
			return nil
		}
		name := rest[i+1 : j]
		rest = rest[j+1:]
		if len(r.PathValue(name)) > maxIDBytes {
			return problem(http.StatusNotFound, "no such resource: %s is over %d bytes", name, maxIDBytes)
		}
	}
}

// Route is one route of the API.
type Route struct {
	Method, Path string
	// Operator routes take the operator key; the others a tenant key.
	Operator bool
	// Public routes take no credential: the links of hookline's e-mails,
	// whose token (checked by the handler) is the credential.
	Public bool
	// Scope is what a portal link needs to take this tenant route (an API
	// key holds every scope). Empty: any tenant credential (reads and the
	// replay of dead deliveries).
	Scope domain.Scope
	// Expensive routes do work the tenant sizes (listings, metrics, event
	// lookups, replays, JWKS): each request takes one of the tenant's
	// TenantExpensiveRate a second and runs under ExpensiveBudget
	// (tenantlimit.go). The others take neither.
	Expensive bool
	handle    func(s *Server, w http.ResponseWriter, r *http.Request, tenant string) *Problem
}

// Routes lists every route: the router, the OpenAPI document's test and the
// CDK stack's API Gateway routes are all built from it.
func Routes() []Route {
	return []Route{
		{Method: "POST", Path: "/v1/endpoints", Scope: domain.ScopeEndpointsWrite, handle: (*Server).createEndpoint},
		{Method: "GET", Path: "/v1/endpoints", Expensive: true, handle: (*Server).listEndpoints},
		{Method: "GET", Path: "/v1/endpoints/{endpoint_id}", handle: (*Server).getEndpoint},
		{Method: "GET", Path: "/v1/endpoints/{endpoint_id}/stats", Expensive: true, handle: (*Server).getEndpointStats},
		{Method: "PATCH", Path: "/v1/endpoints/{endpoint_id}", Scope: domain.ScopeEndpointsWrite, handle: (*Server).updateEndpoint},
		{Method: "DELETE", Path: "/v1/endpoints/{endpoint_id}", Scope: domain.ScopeEndpointsWrite, handle: (*Server).deleteEndpoint},
		{Method: "POST", Path: "/v1/notification-emails", Scope: domain.ScopeEndpointsWrite, handle: (*Server).createNotifyEmail},
		{Method: "GET", Path: "/v1/notification-emails", handle: (*Server).listNotifyEmails},
		{Method: "DELETE", Path: "/v1/notification-emails/{notify_id}", Scope: domain.ScopeEndpointsWrite, handle: (*Server).deleteNotifyEmail},
		{Method: "GET", Path: "/v1/email-links/verify", Public: true, handle: (*Server).verifyNotifyEmail},
		{Method: "GET", Path: "/v1/email-links/unsubscribe", Public: true, handle: (*Server).unsubscribeNotifyEmail},
		{Method: "POST", Path: "/v1/email-links/unsubscribe", Public: true, handle: (*Server).unsubscribeNotifyEmail},
		{Method: "PUT", Path: "/v1/endpoints/{endpoint_id}/auth", Scope: domain.ScopeEndpointsWrite, handle: (*Server).setAuth},
		{Method: "DELETE", Path: "/v1/endpoints/{endpoint_id}/auth", Scope: domain.ScopeEndpointsWrite, handle: (*Server).deleteAuth},
		{Method: "POST", Path: "/v1/endpoints/{endpoint_id}/rotate-secret", Scope: domain.ScopeSecretsRotate, handle: (*Server).rotateSecret},
		{Method: "POST", Path: "/v1/endpoints/{endpoint_id}/enable", Scope: domain.ScopeEndpointsWrite, handle: (*Server).enableEndpoint},
		{Method: "POST", Path: "/v1/endpoints/{endpoint_id}/disable", Scope: domain.ScopeEndpointsWrite, handle: (*Server).disableEndpoint},
		{Method: "POST", Path: "/v1/endpoints/{endpoint_id}/test", Scope: domain.ScopeEndpointsWrite, handle: (*Server).testEndpoint},
		{Method: "GET", Path: "/v1/metrics/attempts", Expensive: true, handle: (*Server).getMetrics},
		{Method: "POST", Path: "/v1/endpoints/{endpoint_id}/cancel-pending", Scope: domain.ScopeEndpointsWrite, Expensive: true, handle: (*Server).cancelPending},
		{Method: "GET", Path: "/v1/jwks.json", Expensive: true, handle: (*Server).jwks},
		{Method: "POST", Path: "/v1/events", Scope: domain.ScopeEventsPublish, handle: (*Server).publish},
		{Method: "GET", Path: "/v1/deliveries", Expensive: true, handle: (*Server).listDeliveries},
		{Method: "GET", Path: "/v1/deliveries/{delivery_id}", handle: (*Server).getDelivery},
		{Method: "GET", Path: "/v1/events/{event_id}/deliveries", Expensive: true, handle: (*Server).eventDeliveries},
		{Method: "POST", Path: "/v1/deliveries/{delivery_id}/resend", Scope: domain.ScopeDeliveriesReplay, Expensive: true, handle: (*Server).resendDelivery},
		{Method: "GET", Path: "/v1/events", Expensive: true, handle: (*Server).listEvents},
		{Method: "GET", Path: "/v1/events/{event_id}", Expensive: true, handle: (*Server).getEvent},
		{Method: "GET", Path: "/v1/dlq", Expensive: true, handle: (*Server).listDLQ},
		{Method: "POST", Path: "/v1/dlq/replay", Expensive: true, handle: (*Server).replayDLQ},
		{Method: "POST", Path: "/v1/replays", Scope: domain.ScopeDeliveriesReplay, Expensive: true, handle: (*Server).replaySince},
		{Method: "GET", Path: "/v1/replays/{job_id}", handle: (*Server).getJob},
		{Method: "GET", Path: "/v1/session", handle: (*Server).getSession},
		{Method: "GET", Path: "/v1/egress-ips", handle: (*Server).egressIPs},
		{Method: "GET", Path: "/v1/event-types", handle: (*Server).listEventTypes},
		{Method: "POST", Path: "/v1/admin/tenants", Operator: true, handle: (*Server).createTenant},
		{Method: "POST", Path: "/v1/admin/tenants/{tenant_id}/keys", Operator: true, handle: (*Server).createKey},
		{Method: "DELETE", Path: "/v1/admin/tenants/{tenant_id}/keys/{key_id}", Operator: true, handle: (*Server).revokeKey},
		{Method: "POST", Path: "/v1/admin/tenants/{tenant_id}/portal-links", Operator: true, handle: (*Server).createPortalLink},
		{Method: "DELETE", Path: "/v1/admin/tenants/{tenant_id}/portal-links/{link_id}", Operator: true, handle: (*Server).revokePortalLink},
		{Method: "DELETE", Path: "/v1/admin/tenants/{tenant_id}", Operator: true, handle: (*Server).eraseTenant},
		{Method: "GET", Path: "/v1/admin/tenants/{tenant_id}/erasure", Operator: true, handle: (*Server).getErasure},
		{Method: "POST", Path: "/v1/admin/dlq/redrive", Operator: true, handle: (*Server).redriveDLQ},
		{Method: "GET", Path: "/v1/admin/replays/{job_id}", Operator: true, handle: (*Server).getAdminJob},
		{Method: "GET", Path: "/v1/admin/stats", Operator: true, handle: (*Server).stats},
		{Method: "GET", Path: "/v1/admin/tenants", Operator: true, handle: (*Server).listTenants},
		{Method: "GET", Path: "/v1/admin/alarms", Operator: true, handle: (*Server).listAlarms},
	}
}

// Handler returns the router with every route and authentication, and the
// console's pages (ConsoleRoutes). What no route takes is answered with a
// problem document: a path that is not one of the routes' (or not in its
// clean form: "//v1/endpoints", "/v1/./endpoints", "/v1/endpoints/") 404,
// never a redirect; a method the path does not take 405, with Allow naming
// those it does. The console's directories (/console/, /console-hello/) are
// the only paths with a trailing slash it serves, and GET /console the only
// redirect (to the console's page).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	s.consoleHandler(mux)
	var paths []string
	methods := map[string][]string{}
	for _, rt := range Routes() {
		mux.Handle(rt.Method+" "+rt.Path, s.route(rt))
		if methods[rt.Path] == nil {
			paths = append(paths, rt.Path)
		}
		methods[rt.Path] = append(methods[rt.Path], rt.Method)
	}
	for _, p := range paths {
		// Any other method of a route's path; a pattern without a method
		// is less specific than the routes', so it only gets the rest.
		allow := allowHeader(methods[p])
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			writeProblem(w, notAllowed(r.Method, p, allow))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, noRoute(r))
	})
	return s.recoverer(cleanPathsOnly(mux))
}

// methodsOf lists the methods of the routes at path.
func methodsOf(path string) []string {
	var ms []string
	for _, rt := range Routes() {
		if rt.Path == path {
			ms = append(ms, rt.Method)
		}
	}
	return ms
}

// allowHeader is the Allow value for a path's methods, sorted.
func allowHeader(methods []string) string {
	ms := slices.Clone(methods)
	slices.Sort(ms)
	return strings.Join(slices.Compact(ms), ", ")
}

// notAllowed answers a method that path does not take: 405 with Allow.
func notAllowed(method, path, allow string) *Problem {
	p := problem(http.StatusMethodNotAllowed, "%s is not a method of %s: it takes %s", method, path, allow)
	p.allow = allow
	return p
}

func noRoute(r *http.Request) *Problem {
	return problem(http.StatusNotFound, "no route %s %s", r.Method, r.URL.Path)
}

// cleanPathsOnly answers 404 to a path that is not in its clean form (see
// path.Clean: no empty, "." or ".." segment, no trailing slash), where
// http.ServeMux would redirect to the clean path: a client of this API gets
// a problem document it can read, never a redirect to follow with its key.
func cleanPathsOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; (p == "" || path.Clean(p) != p) && !slices.Contains(consolePaths, p) {
			writeProblem(w, problem(http.StatusNotFound, "no route %s %s: a path has no empty, . or .. segment and no trailing slash", r.Method, p))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// route authenticates a request and runs the route's handler.
func (s *Server) route(rt Route) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method != rt.Method {
			// HEAD, which http.ServeMux gives to a GET pattern: the API
			// takes only the methods it documents.
			writeProblem(rw, notAllowed(r.Method, rt.Path, allowHeader(methodsOf(rt.Path))))
			return
		}
		start := s.now()
		w := &statusWriter{ResponseWriter: rw, status: http.StatusOK}
		tenant, keyID, link, p := s.authenticate(r, rt)
		if link != nil {
			r = r.WithContext(context.WithValue(r.Context(), portalLinkKey{}, link))
		}
		if p == nil {
			p = tooLongID(rt, r)
		}
		if p == nil && rt.Expensive {
			p = s.admitExpensive(w, r, tenant)
		}
		if p == nil {
			if rt.Expensive {
				var release context.CancelFunc
				r, release = s.withBudget(r)
				defer release()
			}
			p = rt.handle(s, w, r, tenant)
			if p != nil && p.Status >= http.StatusInternalServerError {
				p = cmp.Or(s.overBudget(r), p)
			}
		}
		if p != nil {
			if p.Status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="hookline"`)
			}
			writeProblem(w, p)
		}
		// Never the key, never a body: ids and the outcome only.
		s.log().InfoContext(r.Context(), "api request", "method", r.Method, "route", rt.Path, "tenant_id", tenant,
			"key_id", keyID, "status", w.status, "latency_ms", s.now().Sub(start).Milliseconds())
	})
}

// authenticate finds who sends r: the tenant of its key or portal token on
// a tenant route (none on an operator route), the id to log of the
// credential (a key id or a portal link id, never the credential), the
// portal link when the credential is one, or the problem that refuses it.
// A portal token is a tenant credential: an operator route refuses it like
// any key that is not the operator's, and a tenant route whose Scope the
// link lacks answers 403 naming that scope. With OperatorCaller set, an
// operator route is reached by the IAM identity API Gateway verified.
func (s *Server) authenticate(r *http.Request, rt Route) (tenant, credentialID string, link *domain.PortalLink, p *Problem) {
	if rt.Public {
		return "", "", nil, nil
	}
	if rt.Operator && s.OperatorCaller != nil {
		caller, ok := s.OperatorCaller(r)
		if !ok {
			return "", "", nil, problem(http.StatusUnauthorized, "this route needs a request signed (SigV4) by an IAM principal allowed execute-api:Invoke on it")
		}
		return "", caller, nil, nil
	}
	token, ok := bearer(r)
	switch {
	case !ok:
		return "", "", nil, problem(http.StatusUnauthorized, "send your API key as Authorization: Bearer <key>")
	case rt.Operator:
		key, err := s.operatorKey(r.Context())
		switch {
		case err != nil:
			// The cause, never the key: OperatorKeyFunc's errors do not carry it.
			s.log().ErrorContext(r.Context(), "operator key unavailable", "error", err.Error(), "path", r.URL.Path)
			return "", "", nil, problem(http.StatusServiceUnavailable, "the operator key is unavailable; try again")
		case !apikey.Equal(token, key):
			return "", apikey.ID(token), nil, problem(http.StatusUnauthorized, "this route needs the operator key")
		}
		return "", "", nil, nil
	case apikey.IsPortalToken(token):
		return s.portalTenant(r, token, rt.Scope)
	}
	t, err := s.Store.TenantForKey(r.Context(), apikey.Hash(token))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", apikey.ID(token), nil, problem(http.StatusUnauthorized, "the API key is not valid (unknown or revoked)")
	case err != nil:
		return "", apikey.ID(token), nil, s.internal(r, err)
	}
	return t, apikey.ID(token), nil, nil
}

// DefaultOperatorKeyTTL is how long the api function keeps the operator
// key it read from the secret store: a rotated key is accepted, and the old
// one refused, at most this long after the rotation.
const DefaultOperatorKeyTTL = time.Minute

// operatorKey is OperatorKey or, if that is empty, the key OperatorKeyFunc
// gives, fetched on the first call and again once it is OperatorKeyTTL old.
// "" and no error: there is no operator key.
func (s *Server) operatorKey(ctx context.Context) (string, error) {
	if s.OperatorKey != "" || s.OperatorKeyFunc == nil {
		return s.OperatorKey, nil
	}
	ttl := s.OperatorKeyTTL
	if ttl <= 0 {
		ttl = DefaultOperatorKeyTTL
	}
	now := s.now()
	s.fetched.mu.Lock()
	defer s.fetched.mu.Unlock()
	if s.fetched.key == "" || now.Sub(s.fetched.at) >= ttl || now.Before(s.fetched.at) {
		s.fetched.key = ""
		key, err := s.OperatorKeyFunc(ctx)
		if err != nil {
			return "", fmt.Errorf("get the operator key: %w", err)
		}
		if key == "" {
			return "", errors.New("get the operator key: it is empty")
		}
		s.fetched.key, s.fetched.at = key, now
	}
	return s.fetched.key, nil
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", false
	}
	token := strings.TrimSpace(h[len(prefix):])
	return token, token != ""
}

// internal logs an unexpected failure and answers 500 without its detail. Only
// an infrastructure failure (the table unreachable) gets here; input never does.
// A read of an index DynamoDB is still creating (an upgrade's deploy has
// just added it, and its backfill runs) is not a failure: it answers 503
// with a Retry-After (store.IndexRetryAfter) and says why.
func (s *Server) internal(r *http.Request, err error) *Problem {
	if p := s.overBudget(r); p != nil {
		// Not a failure: the request ran over its budget.
		s.log().WarnContext(r.Context(), "api request over its budget", "error", err.Error(), "path", r.URL.Path)
		return p
	}
	var notReady *store.IndexNotReadyError
	if errors.As(err, &notReady) {
		s.log().WarnContext(r.Context(), "api index not ready", "index", notReady.Index, "path", r.URL.Path)
		p := problem(http.StatusServiceUnavailable, "this listing reads the index %s, which is still being created after an upgrade (DynamoDB is filling it); try again in a few minutes", notReady.Index)
		p.retryAfter = store.IndexRetryAfter
		return p
	}
	s.log().ErrorContext(r.Context(), "api internal error", "error", err.Error(), "path", r.URL.Path)
	return problem(http.StatusInternalServerError, "internal error; try again")
}

func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				s.log().ErrorContext(r.Context(), "api panic", "path", r.URL.Path)
				writeProblem(w, problem(http.StatusInternalServerError, "internal error"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// statusWriter remembers the status a handler wrote, for the access log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}
