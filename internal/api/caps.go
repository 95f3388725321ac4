package api

import (
	"cmp"
	"net/http"

	"github.com/hookline/hookline/internal/domain"
)

// Caps are the tenant caps the API enforces: what one tenant may size, so
// that no function's work grows with it beyond a bound (docs/api.md,
// "Tenant caps"; docs/configuration.md for each default's anchor). The
// caps checked field by field (20 headers of 1 KiB, 50 event types of 128
// bytes, a 4 KiB filter, a 2 KiB URL, 512 bytes of description) are in
// validate; these are the ones over a whole endpoint or a whole tenant.
type Caps struct {
	// MaxEndpoints is how many endpoints a tenant may have; a create
	// beyond answers 409 with cap endpoints_per_tenant. It also bounds an
	// event's fan-out (one delivery per endpoint). Default
	// domain.DefaultMaxEndpoints (100).
	MaxEndpoints int
	// MaxEndpointBytes bounds domain.Endpoint.TenantBytes of one
	// endpoint; a create or update beyond answers 400 with cap
	// endpoint_bytes. Default domain.DefaultMaxEndpointBytes (16 KiB).
	MaxEndpointBytes int
	// MaxMetricsEventTypes is how many event types group_by=event_type
	// answers, the rest summed as "other". Default
	// domain.DefaultMaxMetricsEventTypes (50).
	MaxMetricsEventTypes int
}

// The caps' names, as a problem's cap field gives them.
const (
	CapEndpointsPerTenant = "endpoints_per_tenant"
	CapEndpointBytes      = "endpoint_bytes"
)

// withDefaults is c with each zero field at its default.
func (c Caps) withDefaults() Caps {
	c.MaxEndpoints = cmp.Or(c.MaxEndpoints, domain.DefaultMaxEndpoints)
	c.MaxEndpointBytes = cmp.Or(c.MaxEndpointBytes, domain.DefaultMaxEndpointBytes)
	c.MaxMetricsEventTypes = cmp.Or(c.MaxMetricsEventTypes, domain.DefaultMaxMetricsEventTypes)
	return c
}

// capProblem is a refusal by cap name at limit: status, with the detail
// format says.
func capProblem(status int, name string, limit int, format string, args ...any) *Problem {
	p := problem(status, format, args...)
	p.Cap, p.Limit = name, limit
	return p
}

// newEndpointFits answers the cap a new endpoint made of in would pass:
// its size first (no read), then the tenant's count.
func (s *Server) newEndpointFits(r *http.Request, tenant string, in endpointInput) *Problem {
	if p := s.endpointSize(sized(domain.Endpoint{}, in)); p != nil {
		return p
	}
	return s.endpointRoom(r, tenant)
}

// endpointRoom answers 409 when the tenant already has the most endpoints
// its cap allows. The count is strongly consistent and reads at most the
// cap's items; two creates at once may both pass it (the overshoot is at
// most the creates running at once, which the api function's concurrency
// bounds), as a create is rare and a counter item would add a write to
// every create and delete.
func (s *Server) endpointRoom(r *http.Request, tenant string) *Problem {
	limit := s.Caps.withDefaults().MaxEndpoints
	n, err := s.Store.CountEndpoints(r.Context(), tenant, limit)
	if err != nil {
		return s.internal(r, err)
	}
	if n >= limit {
		return capProblem(http.StatusConflict, CapEndpointsPerTenant, limit,
			"the tenant has %d endpoints, the most it may have (endpoints_per_tenant %d): delete one before creating another", n, limit)
	}
	return nil
}

// endpointSize answers 400 when e, as it would be stored, holds more of
// the tenant's bytes than its cap.
func (s *Server) endpointSize(e domain.Endpoint) *Problem {
	limit := s.Caps.withDefaults().MaxEndpointBytes
	if n := e.TenantBytes(); n > limit {
		p := capProblem(http.StatusBadRequest, CapEndpointBytes, limit,
			"the endpoint would hold %d bytes of url, description, event_types, headers, filter, target and role_arn, more than its cap (endpoint_bytes %d)", n, limit)
		p.Errors = []FieldError{{Field: "endpoint", Message: p.Detail}}
		return p
	}
	return nil
}

// sized is base with the fields in sets applied: what the endpoint would
// hold of the tenant's bytes after a create (base empty) or an update
// (base the stored endpoint).
func sized(base domain.Endpoint, in endpointInput) domain.Endpoint {
	e := base
	if in.URL != nil {
		e.URL = *in.URL
	}
	if in.Description != nil {
		e.Description = *in.Description
	}
	if in.EventTypes != nil {
		e.EventTypes = *in.EventTypes
	}
	if in.Headers != nil {
		e.Headers = *in.Headers
	}
	if in.Target != nil {
		e.Target = *in.Target
	}
	if in.RoleARN != nil {
		e.RoleARN = *in.RoleARN
	}
	if f := filterChange(in.Filter); f != nil {
		e.Filter = *f
	}
	if in.Auth != nil {
		a, _ := in.Auth.public()
		e.Auth = &a
	}
	return e
}

// sizeChanges reports whether in sets a field that counts towards an
// endpoint's size.
func (in endpointInput) sizeChanges() bool {
	return in.URL != nil || in.Description != nil || in.EventTypes != nil || in.Headers != nil ||
		in.Target != nil || in.RoleARN != nil || in.Filter != nil || in.Auth != nil
}
