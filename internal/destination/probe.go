package destination

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/sender"
)

// The probe of a role's trust policy: AssumeRole with an external ID that
// no endpoint has. STS checks an external ID only where the trust policy
// has an sts:ExternalId condition, so a role that grants this session
// would grant it to any of hookline's tenants who names it (the confused
// deputy the external ID exists to stop): hookline refuses it.
const (
	// ProbeSessionName is the RoleSessionName of the probe, as the
	// customer's CloudTrail shows it.
	ProbeSessionName = "hookline-probe"
	// probeDuration is the shortest session STS grants (900 s): a probe
	// that succeeds is a session nobody uses.
	probeDuration = 900
	// ProbeExternalIDPrefix starts the probe's external ID, followed by
	// 128 random bits: never an endpoint's (those start "hlx_").
	ProbeExternalIDPrefix = "hookline-probe-"
)

// probed is what a warm instance knows of a role's trust policy.
type probed struct {
	// guarded: the role refused a wrong external ID.
	guarded bool
	// until, for an unguarded role, is when it is probed again (the
	// customer may have fixed it and enabled the endpoint).
	until time.Time
}

// probe checks that role refuses a wrong external ID, once per warm
// instance (fresh: again, for a test event): ok to go on, or the Result to
// answer instead. A role found unguarded is answered from memory for
// RefusedFor, then probed again.
func (s *Sender) probe(ctx context.Context, role string, fresh bool) (res sender.Result, ok bool) {
	now := s.o.Now()
	if p, known := s.roles.probed(role); known && !fresh {
		switch {
		case p.guarded:
			return sender.Result{}, true
		case now.Before(p.until):
			return unguarded(), false
		}
	}
	ext, err := probeExternalID()
	if err != nil {
		return sender.Result{Outcome: sender.Retry, Error: "probe", Excerpt: clip(err.Error())}, false
	}
	_, err = s.sts.AssumeRole(ctx, &sts.AssumeRoleInput{
		RoleArn: aws.String(role), RoleSessionName: aws.String(ProbeSessionName),
		ExternalId: aws.String(ext), DurationSeconds: aws.Int32(probeDuration),
	})
	if err == nil {
		s.roles.setProbed(role, probed{until: now.Add(RefusedFor)})
		return unguarded(), false
	}
	res = classifyAssume(err)
	if res.Outcome != sender.Dead {
		// Throttled or unreachable: the attempt is retried on the
		// schedule, probe first, and nothing is sent unprobed.
		return res, false
	}
	// Refused: the role requires its external ID, or does not exist or
	// trust hookline (the attempt's own AssumeRole says which, and
	// forgets this probe if it is refused too: forgetProbe).
	s.roles.setProbed(role, probed{guarded: true})
	return sender.Result{}, true
}

// unguarded is the Result of an attempt to a role that accepted a wrong
// external ID: dead, and the endpoint disabled until the customer fixes
// the trust policy and enables it again.
func unguarded() sender.Result {
	return sender.Result{
		Outcome: sender.Dead, Error: "destination_role_unguarded", Reason: domain.ReasonDestinationRoleUnguarded,
		DisableEndpoint: domain.DisabledRoleUnguarded,
		Excerpt: "the role accepted an external ID that is not the endpoint's: its trust policy must require the endpoint's " +
			"(Condition StringEquals sts:ExternalId); fix it, then enable the endpoint",
	}
}

// probeExternalID is ProbeExternalIDPrefix and 128 random bits.
func probeExternalID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return ProbeExternalIDPrefix + hex.EncodeToString(b[:]), nil
}
