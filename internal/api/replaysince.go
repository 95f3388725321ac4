package api

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookline/hookline/internal/cancel"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/replay"
	"github.com/hookline/hookline/internal/retry"
)

// optional reads an optional string field of a body: absent is "", an
// empty value is the client's bug.
func optional(field string, v *string, errs *[]FieldError) string {
	if v == nil {
		return ""
	}
	if *v == "" {
		*errs = append(*errs, FieldError{Field: field, Message: "is empty: give a value or leave the field out"})
	}
	if len(*v) > 256 {
		*errs = append(*errs, FieldError{Field: field, Message: "is over 256 bytes"})
	}
	return *v
}

// rangeFrom reads a range's times: since and until (RFC 3339; until
// defaults to the job's start), neither in the future, until not before
// since.
func rangeFrom(sinceField, since, untilField, until string, now time.Time, errs *[]FieldError) (time.Time, time.Time) {
	from, to := timeParam(sinceField, since, errs), timeParam(untilField, until, errs)
	future := "is in the future (the server's time is " + now.UTC().Format(time.RFC3339) + "): no event occurred then"
	if from.After(now) {
		*errs = append(*errs, FieldError{Field: sinceField, Message: future})
	}
	if to.After(now) {
		*errs = append(*errs, FieldError{Field: untilField, Message: future})
	}
	if !from.IsZero() && !to.IsZero() && to.Before(from) {
		*errs = append(*errs, FieldError{Field: untilField, Message: "is before " + sinceField})
	}
	return from, to
}

// statesFrom reads the states a replay since a time selects: each one of
// domain.DeliveryStates, once; none is every state.
func statesFrom(in []string, errs *[]FieldError) []domain.DeliveryState {
	var out []domain.DeliveryState
	names := make([]string, 0, 4)
	for _, s := range domain.DeliveryStates {
		names = append(names, string(s))
	}
	for i, s := range in {
		st := domain.DeliveryState(s)
		field := "states[" + strconv.Itoa(i) + "]"
		switch {
		case !slices.Contains(domain.DeliveryStates, st):
			*errs = append(*errs, FieldError{Field: field, Message: "must be one of " + strings.Join(names, ", ")})
		case slices.Contains(out, st):
			*errs = append(*errs, FieldError{Field: field, Message: "is repeated"})
		default:
			out = append(out, st)
		}
	}
	return out
}

// replaySince starts a replay of the tenant's deliveries in any state
// whose events occurred in a time range (domain.KindSince).
func (s *Server) replaySince(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	var in struct {
		Since      *string  `json:"since"`
		Until      *string  `json:"until"`
		EndpointID *string  `json:"endpoint_id"`
		EventType  *string  `json:"event_type"`
		States     []string `json:"states"`
	}
	if p := decode(w, r, &in); p != nil {
		return p
	}
	var errs []FieldError
	rg := domain.Range{EndpointID: optional("endpoint_id", in.EndpointID, &errs), EventType: optional("event_type", in.EventType, &errs)}
	since := optional("since", in.Since, &errs)
	if in.Since == nil {
		errs = append(errs, FieldError{Field: "since", Message: "is required: the time from which events are replayed"})
	}
	now := s.now().UTC()
	rg.Since, rg.Until = rangeFrom("since", since, "until", optional("until", in.Until, &errs), now, &errs)
	rg.Until = cmp.Or(rg.Until, now) // the events before the job's start
	if in.States != nil && len(in.States) == 0 {
		errs = append(errs, FieldError{Field: "states", Message: "is empty: name states, or leave the field out for every state"})
	}
	rg.States = statesFrom(in.States, &errs)
	if len(errs) > 0 {
		return invalid(errs...)
	}
	if s.MessageLog == nil {
		return problem(http.StatusServiceUnavailable, "replaying since a time needs the message log, which this deployment does not have")
	}
	if p := s.endpointOf(r, tenant, rg.EndpointID); p != nil {
		return p
	}
	return s.startJob(w, r, domain.NewJob(tenant, &replay.Since{Range: rg}))
}

// endpointOf answers 404 when endpointID ("" none asked for) is not one of
// the tenant's endpoints.
func (s *Server) endpointOf(r *http.Request, tenant, endpointID string) *Problem {
	if endpointID == "" {
		return nil
	}
	_, err := s.Store.Endpoint(r.Context(), tenant, endpointID)
	if err != nil {
		return s.found(r, "endpoint "+strconv.Quote(endpointID), err)
	}
	return nil
}

// cancelPending starts the cancel of an endpoint's pending deliveries whose
// events occurred before a time (domain.KindCancel).
func (s *Server) cancelPending(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	var in struct {
		Before *string `json:"before"`
		Since  *string `json:"since"`
	}
	if p := decode(w, r, &in); p != nil {
		return p
	}
	var errs []FieldError
	rg := domain.Range{EndpointID: r.PathValue("endpoint_id"), States: []domain.DeliveryState{domain.StatePending}}
	now := s.now().UTC()
	rg.Since, rg.Until = rangeFrom("since", optional("since", in.Since, &errs), "before", optional("before", in.Before, &errs), now, &errs)
	if len(errs) > 0 {
		return invalid(errs...)
	}
	rg.Until = cmp.Or(rg.Until, now) // the events before the job's start
	if rg.Since.IsZero() {
		// A delivery older than the age cap is dead, not pending (unless a
		// replay sent it again since: name since to reach it).
		rg.Since = rg.Until.Add(-cmp.Or(s.Retry.MaxAge, retry.DefaultMaxAge))
	}
	if s.MessageLog == nil {
		return problem(http.StatusServiceUnavailable, "cancelling pending deliveries needs the message log, which this deployment does not have")
	}
	if p := s.endpointOf(r, tenant, rg.EndpointID); p != nil {
		return p
	}
	return s.startJob(w, r, domain.NewJob(tenant, &cancel.Args{Range: rg}))
}
