package api

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/eventtypes"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/internal/store"
)

// EndpointView is an endpoint as the API shows it. Secret is set only in the
// answers to create and rotate-secret: it is stored sealed, and the API
// cannot open it again.
type EndpointView struct {
	ID          string            `json:"id"`
	URL         string            `json:"url"`
	Description string            `json:"description"`
	EventTypes  []string          `json:"event_types"`
	Headers     map[string]string `json:"headers"`
	// HeadersRedacted is true when each of Headers' values is
	// RedactedHeaderValue: the credential may read, not write, the
	// endpoint. Absent: the values are shown.
	HeadersRedacted bool `json:"headers_redacted,omitempty"`
	// RateLimit is the most requests per second hookline sends the
	// endpoint; absent: no limit.
	RateLimit      int                  `json:"rate_limit,omitempty"`
	Disabled       bool                 `json:"disabled"`
	DisabledReason domain.DisableReason `json:"disabled_reason,omitempty"`
	CreatedAt      time.Time            `json:"created_at"`
	UpdatedAt      *time.Time           `json:"updated_at,omitempty"`
	Secret         string               `json:"secret,omitempty"`
	// SecretRotatedUntil is when the previous secret stops signing.
	PreviousSecretUntil *time.Time `json:"previous_secret_until,omitempty"`
	// Type is http, sqs, sns or eventbridge; Target and RoleARN are an AWS
	// type's ARNs (package destination, api/destination.go). ExternalID,
	// like Secret, is set only in the answer to create.
	Type       domain.EndpointType `json:"type"`
	Target     string              `json:"target,omitempty"`
	RoleARN    string              `json:"role_arn,omitempty"`
	ExternalID string              `json:"external_id,omitempty"`
	// Signatures are the schemes the endpoint is signed with ("v1",
	// "v1a"); PublicKeys the whpk_ keys that verify its v1a signatures,
	// newest first (two while a rotation's overlap lasts). signatures.go.
	Signatures []string `json:"signatures"`
	PublicKeys []string `json:"public_keys,omitempty"`
	// RetrySchedule and TimeoutSeconds are the endpoint's own retry delays
	// and request timeout (endpointsettings.go); absent: the stack's.
	RetrySchedule  []int `json:"retry_schedule,omitempty"`
	TimeoutSeconds int   `json:"timeout_seconds,omitempty"`
	// Filter is the endpoint's payload filter (docs/filters.md); absent:
	// none.
	Filter json.RawMessage `json:"filter,omitempty"`
	// Auth is how hookline authenticates to the endpoint, its secret never
	// shown (endpointauth.go); absent: none.
	Auth *AuthView `json:"auth,omitempty"`
	// FailureRateAlert is the endpoint's failure-rate alert, its defaults
	// applied (failurerate.go); absent: none.
	FailureRateAlert *FailureRateAlertView `json:"failure_rate_alert,omitempty"`
	// Health is set in the answer to GET /v1/endpoints/{id} only: the
	// other answers (the list's included) leave it out, as it costs a
	// read of the endpoint's counters.
	Health *HealthView `json:"health,omitempty"`
}

// RedactedHeaderValue stands for a custom header's value in an answer to
// a credential that may not write the endpoint (a portal link without
// endpoints:write): custom headers often carry the receiver's own
// credentials, so such a reader sees their names only.
const RedactedHeaderValue = "[redacted]"

// mayWriteEndpoints reports whether r's credential may write endpoints: an
// API key, or a portal link with domain.ScopeEndpointsWrite.
func mayWriteEndpoints(r *http.Request) bool {
	l, ok := r.Context().Value(portalLinkKey{}).(*domain.PortalLink)
	return !ok || slices.Contains(l.Scopes, domain.ScopeEndpointsWrite)
}

// view is e as the API shows it to r's credential: a credential that may
// not write endpoints (mayWriteEndpoints) gets each custom header's value
// as RedactedHeaderValue, and HeadersRedacted set.
func (s *Server) view(r *http.Request, e domain.Endpoint) EndpointView {
	v := EndpointView{
		ID: e.EndpointID, URL: e.URL, Description: e.Description, EventTypes: e.EventTypes, Headers: e.Headers,
		RateLimit: e.RateLimit, Disabled: e.Disabled, DisabledReason: e.DisabledReason, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt,
		Type: e.Kind(), Target: e.Target, RoleARN: e.RoleARN,
		Signatures: e.Schemes(), PublicKeys: s.activePublicKeys(e),
		RetrySchedule: e.RetrySchedule, TimeoutSeconds: e.TimeoutSeconds,
	}
	v.Filter = filterView(e.Filter)
	v.Auth = authView(e.Auth)
	v.FailureRateAlert = failureRateAlertView(e.FailureRateAlert)
	if v.EventTypes == nil {
		v.EventTypes = []string{}
	}
	if v.Headers == nil {
		v.Headers = map[string]string{}
	}
	if len(v.Headers) > 0 && !mayWriteEndpoints(r) {
		redacted := make(map[string]string, len(v.Headers))
		for k := range v.Headers {
			redacted[k] = RedactedHeaderValue
		}
		v.Headers, v.HeadersRedacted = redacted, true
	}
	if e.RetiringUntil != nil && s.now().Before(*e.RetiringUntil) {
		v.PreviousSecretUntil = e.RetiringUntil
	}
	return v
}

// endpointInput is the body of create and update.
type endpointInput struct {
	URL         *string            `json:"url"`
	Description *string            `json:"description"`
	EventTypes  *[]string          `json:"event_types"`
	Headers     *map[string]string `json:"headers"`
	RateLimit   *int               `json:"rate_limit"`
	// Type, Target and RoleARN: an AWS destination (api/destination.go).
	Type    *string `json:"type"`
	Target  *string `json:"target"`
	RoleARN *string `json:"role_arn"`
	// kind is the stored endpoint's type, on update (set before validate).
	kind domain.EndpointType
	// Signatures are the signature schemes (signatures.go).
	Signatures *[]string `json:"signatures"`
	// RetrySchedule and TimeoutSeconds: endpointsettings.go.
	RetrySchedule  *[]int `json:"retry_schedule"`
	TimeoutSeconds *int   `json:"timeout_seconds"`
	// Filter is the payload filter: absent leaves it, null removes it.
	Filter json.RawMessage `json:"filter"`
	// Auth is the endpoint's authentication, on create; PUT and DELETE
	// /v1/endpoints/{id}/auth change it (endpointauth.go).
	Auth *authInput `json:"auth"`
	// FailureRateAlert is the failure-rate alert: absent leaves it, null
	// removes it (failurerate.go).
	FailureRateAlert json.RawMessage `json:"failure_rate_alert"`
}

// validate checks the fields present; create requires url.
func (s *Server) validate(in endpointInput, create bool) *Problem {
	var errs fieldErrors
	kind := in.kind
	if create || kind == "" {
		kind = in.endpointType()
	}
	s.checkDestination(&errs, in, kind, create)
	if in.URL != nil && kind == domain.TypeHTTP {
		if err := s.URLs.CheckURL(*in.URL); err != nil {
			errs.add("url", "%s", strings.TrimPrefix(err.Error(), "endpoint URL is not acceptable: "))
		}
	}
	if in.Description != nil && len(*in.Description) > 512 {
		errs.add("description", "is %d bytes, at most 512", len(*in.Description))
	}
	if msg := rateLimitProblem(in.RateLimit, create); msg != "" {
		errs.add("rate_limit", "%s", msg)
	}
	if in.EventTypes != nil {
		errs.checkEventTypes(*in.EventTypes, s.EventTypes)
	}
	if in.Headers != nil {
		errs.checkHeaders(*in.Headers)
	}
	errs.checkSignatures(in.Signatures)
	s.checkEndpointSettings(&errs, in, create)
	errs.checkFilter(in.Filter)
	errs.checkFailureRateAlert(in.FailureRateAlert)
	switch {
	case in.Auth == nil:
	case !create:
		errs.add("auth", "is changed with PUT /v1/endpoints/{id}/auth")
	case kind != domain.TypeHTTP:
		errs.add("auth", "is for http endpoints: an AWS destination is reached by its role")
	default:
		s.validateAuth(&errs, "auth.", *in.Auth, deref(in.URL))
	}
	if len(errs) > 0 {
		return invalid(errs...)
	}
	return nil
}

// fieldErrors gathers what validate finds wrong, field by field.
type fieldErrors []FieldError

// add records that field is wrong, as the message format says.
func (errs *fieldErrors) add(field, format string, args ...any) {
	*errs = append(*errs, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// checkEventTypes checks an endpoint's event_types: at most 50, each an
// event type, a prefix or *; with an event-type catalog (catalog not
// nil), each naming at least one of its types.
func (errs *fieldErrors) checkEventTypes(eventTypes []string, catalog *eventtypes.Catalog) {
	if len(eventTypes) > 50 {
		errs.add("event_types", "has %d entries, at most 50", len(eventTypes))
	}
	for i, t := range eventTypes {
		switch {
		case len(t) > 128 || !validEventType(t):
			errs.add(fmt.Sprintf("event_types[%d]", i), "must be an event type like payment.succeeded, a prefix like payment.*, or *")
		case !catalog.Matches(t):
			errs.add(fmt.Sprintf("event_types[%d]", i), "%q names no type of this stack's event-type catalog (GET /v1/event-types)", t)
		}
	}
}

// checkHeaders checks an endpoint's custom headers: at most 20, each a
// valid name hookline does not set itself, no two the same header, and a
// valid value of at most 1024 bytes. Names are checked in sorted order, so
// the errors come in a stable one.
func (errs *fieldErrors) checkHeaders(headers map[string]string) {
	if len(headers) > 20 {
		errs.add("headers", "has %d entries, at most 20", len(headers))
	}
	seen := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		value := headers[name]
		field := "headers." + name
		canonical := http.CanonicalHeaderKey(name)
		switch {
		case !validHeaderName(name) || len(name) > 128:
			errs.add(field, "is not a valid header name: 1 to 128 letters, digits or !#$%%&'*+-.^_`|~")
		case domain.ReservedHeader(name):
			errs.add(field, "is set by hookline and cannot be replaced")
		case seen[canonical] != "":
			errs.add(field, "is the same header as %s (names are case-insensitive)", seen[canonical])
		case len(value) > 1024:
			errs.add(field, "is %d bytes, at most 1024", len(value))
		case !validHeaderValue(value):
			errs.add(field, "has a control character (only tab is allowed): not a valid header value")
		}
		seen[canonical] = name
	}
}

// rateLimitProblem says what is wrong with a rate_limit (nil: absent), or
// nothing: 1 to domain.MaxRateLimit, or 0 on update (which removes it).
func rateLimitProblem(n *int, create bool) string {
	if n == nil || (*n == 0 && !create) || (*n >= 1 && *n <= domain.MaxRateLimit) {
		return ""
	}
	return fmt.Sprintf("is %d, must be a whole number of requests per second from 1 to %d (0 on update removes the limit)", *n, domain.MaxRateLimit)
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func (s *Server) newID(prefix string) (string, error) {
	var b [10]byte
	if _, err := io.ReadFull(s.random(), b[:]); err != nil {
		return "", err
	}
	return prefix + idEncoding.EncodeToString(b[:]), nil
}

func (s *Server) random() io.Reader {
	if s.Rand != nil {
		return s.Rand
	}
	return rand.Reader
}

func (s *Server) createEndpoint(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	var in endpointInput
	if p := decode(w, r, &in); p != nil {
		return p
	}
	if p := s.validate(in, true); p != nil {
		return p
	}
	if p := s.newEndpointFits(r, tenant, in); p != nil {
		return p
	}
	id, err := s.newID("ep_")
	if err != nil {
		return s.internal(r, err)
	}
	secret, err := signing.NewSecret(s.random())
	if err != nil {
		return s.internal(r, err)
	}
	sealed, err := s.seal(r.Context(), sealing.Ref{TenantID: tenant, EndpointID: id}, secret)
	if err != nil {
		return s.internal(r, err)
	}
	// The fields the tenant sizes, as the endpoint_bytes cap counted them.
	e := sized(domain.Endpoint{TenantID: tenant, EndpointID: id, SealedSecrets: []string{sealed}}, in)
	externalID, err := s.setDestination(r.Context(), &e, in)
	if err != nil {
		return s.internal(r, err)
	}
	if in.RateLimit != nil {
		e.RateLimit = *in.RateLimit
	}
	if in.Auth != nil {
		auth, err := s.sealAuth(r.Context(), sealing.Ref{TenantID: tenant, EndpointID: id}, *in.Auth)
		if err != nil {
			return s.internal(r, err)
		}
		e.Auth = &auth
	}
	if err := s.setSignatures(r.Context(), &e, in.Signatures); err != nil {
		return s.internal(r, err)
	}
	setEndpointSettings(&e, in)
	e.FailureRateAlert = failureRateAlert(in.FailureRateAlert)
	e, err = s.Store.CreateEndpoint(r.Context(), e)
	if err != nil {
		return s.internal(r, err)
	}
	v := s.view(r, e)
	v.Secret, v.ExternalID = secret, externalID
	w.Header().Set("Location", "/v1/endpoints/"+id)
	writeJSON(w, http.StatusCreated, v)
	return nil
}

func (s *Server) listEndpoints(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	limit, cursor, errs := pageParams(r)
	if len(cursor) > 2*maxIDBytes { // no cursor this API returns is that long
		errs = append(errs, FieldError{Field: "cursor", Message: "is not a cursor this API returned"})
	}
	if len(errs) > 0 {
		return invalid(errs...)
	}
	es, next, err := s.Store.ListEndpoints(r.Context(), tenant, limit, cursor)
	if ce := cursorError(err); ce != nil {
		return invalid(*ce)
	}
	if err != nil {
		return s.internal(r, err)
	}
	out := page[EndpointView]{Data: make([]EndpointView, 0, len(es)), NextCursor: next}
	for _, e := range es {
		out.Data = append(out.Data, s.view(r, e))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// found maps a store error: not found (also another tenant's) is 404.
func (s *Server) found(r *http.Request, what string, err error) *Problem {
	if errors.Is(err, store.ErrNotFound) {
		return problem(http.StatusNotFound, "%s not found", what)
	}
	return s.internal(r, err)
}

// writeEndpoint answers with endpoint id, e, as a store call returned it, or
// maps the call's error err (a missing endpoint is 404).
func (s *Server) writeEndpoint(w http.ResponseWriter, r *http.Request, id string, e domain.Endpoint, err error) *Problem {
	if err != nil {
		return s.found(r, "endpoint "+strconv.Quote(id), err)
	}
	writeJSON(w, http.StatusOK, s.view(r, e))
	return nil
}

func (s *Server) getEndpoint(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	id := r.PathValue("endpoint_id")
	e, err := s.Store.Endpoint(r.Context(), tenant, id)
	if err != nil {
		return s.found(r, "endpoint "+strconv.Quote(id), err)
	}
	v := s.view(r, e)
	if v.Health, err = s.health(r.Context(), e); err != nil {
		return s.internal(r, err)
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) updateEndpoint(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	id := r.PathValue("endpoint_id")
	var in endpointInput
	if p := decode(w, r, &in); p != nil {
		return p
	}
	stored, p := s.storedKind(r, tenant, id, &in)
	if p != nil {
		return p
	}
	if p := s.validate(in, false); p != nil {
		return p
	}
	if stored != nil {
		if p := s.endpointSize(sized(*stored, in)); p != nil {
			return p
		}
	}
	c := store.EndpointChange{
		URL: in.URL, Description: in.Description, EventTypes: in.EventTypes, Headers: in.Headers,
		RateLimit: in.RateLimit, Target: in.Target, RoleARN: in.RoleARN,
		RetrySchedule: in.RetrySchedule, TimeoutSeconds: in.TimeoutSeconds, Filter: filterChange(in.Filter),
		FailureRateAlert: failureRateAlertChange(in.FailureRateAlert),
	}
	if p := s.changeSignatures(r, tenant, id, in.Signatures, &c); p != nil {
		return p
	}
	e, err := s.Store.UpdateEndpoint(r.Context(), tenant, id, c)
	return s.writeEndpoint(w, r, id, e, err)
}

func (s *Server) deleteEndpoint(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	id := r.PathValue("endpoint_id")
	if err := s.Store.DeleteEndpoint(r.Context(), tenant, id); err != nil {
		return s.found(r, "endpoint "+strconv.Quote(id), err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// seal seals a signing secret for an endpoint before it is stored.
func (s *Server) seal(ctx context.Context, ref sealing.Ref, secret string) (string, error) {
	if s.Sealer == nil {
		return "", errors.New("no sealer: signing secrets cannot be stored")
	}
	return s.Sealer.Seal(ctx, ref, secret)
}

// DefaultGrace is how long a rotated-out secret keeps signing.
const DefaultGrace = 24 * time.Hour

func (s *Server) rotateSecret(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	id := r.PathValue("endpoint_id")
	var in struct {
		GraceSeconds *int `json:"grace_seconds"`
	}
	if r.ContentLength != 0 {
		if p := decode(w, r, &in); p != nil {
			return p
		}
	}
	grace := DefaultGrace
	if in.GraceSeconds != nil {
		if *in.GraceSeconds < 0 || *in.GraceSeconds > 7*24*3600 {
			return invalid(FieldError{Field: "grace_seconds", Message: "must be from 0 to 604800 (7 days)"})
		}
		grace = time.Duration(*in.GraceSeconds) * time.Second
	}
	secret, err := signing.NewSecret(s.random())
	if err != nil {
		return s.internal(r, err)
	}
	ref := sealing.Ref{TenantID: tenant, EndpointID: id}
	sealed, err := s.seal(r.Context(), ref, secret)
	if err != nil {
		return s.internal(r, err)
	}
	rot := store.Rotation{
		Sealed: sealed, Grace: grace,
		Seal: func(ctx context.Context, plaintext string) (string, error) { return s.seal(ctx, ref, plaintext) },
	}
	if p := s.rotationKey(r, tenant, id, &rot); p != nil {
		return p
	}
	e, err := s.Store.RotateSecret(r.Context(), tenant, id, rot)
	if errors.Is(err, store.ErrConflict) {
		return problem(http.StatusConflict, "the endpoint changed during the rotation; try again")
	}
	if err != nil {
		return s.found(r, "endpoint "+strconv.Quote(id), err)
	}
	v := s.view(r, e)
	v.Secret = secret
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) enableEndpoint(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	return s.setEnabled(w, r, tenant, true)
}

func (s *Server) disableEndpoint(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	return s.setEnabled(w, r, tenant, false)
}

func (s *Server) setEnabled(w http.ResponseWriter, r *http.Request, tenant string, enabled bool) *Problem {
	id := r.PathValue("endpoint_id")
	e, err := s.Store.SetEndpointEnabled(r.Context(), tenant, id, enabled)
	return s.writeEndpoint(w, r, id, e, err)
}
