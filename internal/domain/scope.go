package domain

import (
	"fmt"
	"slices"
	"strings"
)

// Scope is a write permission a portal link may carry. A link always reads
// everything its tenant may read (custom header values only with
// ScopeEndpointsWrite) and may replay its dead deliveries (POST
// /v1/dlq/replay); each other write needs its scope, given when the link
// is minted. An API key holds every scope.
type Scope string

// The scopes.
const (
	// ScopeEndpointsWrite creates, updates, deletes, enables and disables
	// endpoints and sends them test events.
	ScopeEndpointsWrite Scope = "endpoints:write"
	// ScopeSecretsRotate rotates endpoints' signing secrets (the new secret
	// is shown in the answer).
	ScopeSecretsRotate Scope = "secrets:rotate"
	// ScopeEventsPublish publishes events (POST /v1/events).
	ScopeEventsPublish Scope = "events:publish"
	// ScopeDeliveriesReplay sends deliveries again that may have
	// succeeded: a replay since a time (POST /v1/replays, delivered
	// deliveries included) and a resend (POST
	// /v1/deliveries/{id}/resend). Both make the receiver handle events
	// again, so a link that only looks does not carry it.
	ScopeDeliveriesReplay Scope = "deliveries:replay"
)

// Scopes lists every scope, in the order documents show them.
func Scopes() []Scope {
	return []Scope{ScopeEndpointsWrite, ScopeSecretsRotate, ScopeEventsPublish, ScopeDeliveriesReplay}
}

// ParseScopes checks the scopes asked for at a portal link's minting: each
// one of Scopes(), duplicates dropped, in Scopes() order; nil for none.
func ParseScopes(in []string) ([]Scope, error) {
	var out []Scope
	for _, s := range in {
		if !slices.Contains(Scopes(), Scope(s)) {
			names := make([]string, 0, len(Scopes()))
			for _, k := range Scopes() {
				names = append(names, string(k))
			}
			return nil, fmt.Errorf("unknown scope %q: want one of %s", s, strings.Join(names, ", "))
		}
	}
	for _, k := range Scopes() {
		if slices.Contains(in, string(k)) {
			out = append(out, k)
		}
	}
	return out, nil
}
