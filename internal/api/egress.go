package api

import "net/http"

// EgressView answers GET /v1/egress-ips: the addresses hookline's
// requests to receivers come from, for a receiver's firewall allowlist.
// With static egress (the stack's staticEgressAZs) they are the NAT
// gateways' Elastic IPs, fixed for the life of the deployment; without it
// AWS's shared ranges, which no allowlist can hold.
type EgressView struct {
	// Static is true when deliveries leave from IPs only.
	Static bool `json:"static"`
	// IPs are the addresses, one per availability zone; [] when not
	// static.
	IPs []string `json:"ips"`
	// Message says what a receiver can rely on, in a sentence.
	Message string `json:"message"`
}

// The two answers' messages. Either way a receiver verifies the
// signature: an address says where a request came from, not that hookline
// signed it.
const (
	egressStatic = "hookline's requests to your endpoints (and its calls to AWS destinations) come from these addresses only; " +
		"allowlist them all, and verify the webhook-signature header as well"
	egressShared = "hookline sends from AWS's shared address ranges, which change and are shared with other AWS customers: " +
		"an IP allowlist cannot tell hookline apart; verify the webhook-signature header instead"
)

// egressIPs answers the egress addresses: what the stack gave the
// function (Server.EgressIPs), the same for every tenant.
func (s *Server) egressIPs(w http.ResponseWriter, _ *http.Request, _ string) *Problem {
	v := EgressView{IPs: []string{}, Message: egressShared}
	if len(s.EgressIPs) > 0 {
		v = EgressView{Static: true, IPs: s.EgressIPs, Message: egressStatic}
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}
