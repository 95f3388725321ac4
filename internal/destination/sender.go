package destination

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/hookline/hookline/internal/destination/arn"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/sender"
)

// Options configure New. Every field's zero value is a default.
type Options struct {
	// RequestTimeout bounds an attempt (its AssumeRole, when the session is
	// not cached, and its send) when sender.Request.Timeout is 0. Zero is
	// domain.DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Now is the clock used for webhook-timestamp and for remembering a
	// refused role; nil is time.Now.
	Now func() time.Time
	// NoProbe skips the probe of each role's trust policy (an AssumeRole
	// with a wrong external ID before the role's first attempt in a warm
	// instance, and before every test event's): for a cloud that does not
	// evaluate trust policies (the local cloud), where every role would
	// look unguarded. Default false: probe, and refuse a role that accepts
	// a wrong external ID (domain.ReasonDestinationRoleUnguarded).
	NoProbe bool
	// OwnResources are the exact ARNs of hookline's own queues, topic and
	// bus (fnenv's HOOKLINE_OWN_RESOURCES): an attempt whose target is one
	// is dead untried (invalid_destination), and every session is assumed
	// with a policy that denies them (sessionPolicy), so IAM refuses them
	// to any role. Empty: the session policy allows SessionActions only.
	OwnResources []string
}

// Sender sends attempts to AWS destinations. Safe for concurrent use; build
// one per warm instance so that its sessions and clients are reused.
type Sender struct {
	cfg   aws.Config // the services' base: no SDK retries
	sts   *sts.Client
	o     Options
	roles *roles
	// policy is every session's policy (sessionPolicy).
	policy string
}

// New returns a Sender that calls STS with cfg (the deliver function's own
// configuration: region, endpoint override, credentials) and the customer's
// services with the role's credentials in the target's region, through
// cfg's endpoint resolution (so AWS_ENDPOINT_URL reaches a local cloud).
//
// The SDK's own retries are off, for STS and the services alike: an
// attempt is one call, and a throttled or failed one is classified and
// retried on hookline's schedule, where the endpoint's health sees it.
//
// It fails only when the session policy over o.OwnResources is too long
// for STS (MaxSessionPolicy).
func New(cfg aws.Config, o Options) (*Sender, error) {
	if o.RequestTimeout == 0 {
		o.RequestTimeout = domain.DefaultRequestTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	policy, err := sessionPolicy(o.OwnResources)
	if err != nil {
		return nil, err
	}
	cfg = cfg.Copy()
	cfg.Retryer = func() aws.Retryer { return aws.NopRetryer{} }
	cfg.RetryMaxAttempts = 1
	return &Sender{cfg: cfg, sts: sts.NewFromConfig(cfg), o: o, roles: newRoles(MaxRoles, MaxRolesPerTenant), policy: policy}, nil
}

// Send makes one attempt to r.Destination and classifies it. It never
// returns an error: every failure is a Result.
func (s *Sender) Send(ctx context.Context, r sender.Request) sender.Result {
	start := time.Now()
	res := s.send(ctx, r)
	if r.Destination != nil {
		res = settle(res, r.Destination.ChangedAt, s.o.Now())
	}
	res.Latency = time.Since(start)
	return res
}

func (s *Sender) send(ctx context.Context, r sender.Request) sender.Result {
	d := r.Destination
	if d == nil || d.ExternalID == "" {
		// No external ID: a role that trusts hookline without one would be
		// open to any of hookline's tenants (the confused deputy).
		return invalid("the destination has no external ID")
	}
	target, err := arn.ParseTarget(d.Type, d.ARN)
	if err != nil {
		return invalid(err.Error())
	}
	if _, err := arn.ParseRole(d.RoleARN); err != nil {
		return invalid(err.Error())
	}
	if slices.Contains(s.o.OwnResources, d.ARN) {
		return invalid("the target is one of hookline's own resources")
	}
	do, refused := s.prepare(d.Type, target, r, s.o.Now())
	if refused != nil {
		return *refused
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = s.o.RequestTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	k := roleKey{d.TenantID, d.EndpointID, d.RoleARN, d.ExternalID}
	ro := s.roles.get(k, func() *aws.CredentialsCache { return assumer(s.sts, k, s.policy) })
	if res, ok := s.roles.refusal(ro, s.o.Now()); ok {
		return res
	}
	if !s.o.NoProbe {
		if res, ok := s.probe(ctx, d.RoleARN, r.EventType == domain.TestEventType); !ok {
			return res
		}
	}
	if _, err := ro.creds.Retrieve(ctx); err != nil {
		res := classifyAssume(err)
		if res.Outcome == sender.Dead {
			s.roles.refuse(ro, res, s.o.Now())
			s.roles.forgetProbe(d.RoleARN)
		}
		return res
	}
	res := do(ctx, s.roles.region(ro, target.Region, s.cfg))
	if staleSession(res.Error) {
		// The service refused the session itself (revoked, expired early):
		// the next attempt assumes the role again instead of reusing it.
		ro.creds.Invalidate()
	}
	return res
}

// prepare builds the call for t's service, or the Result of refusing it
// before any call.
func (s *Sender) prepare(t domain.EndpointType, target arn.ARN, r sender.Request, ts time.Time) (call, *sender.Result) {
	v := attempt(r, ts)
	switch t {
	case domain.TypeSQS:
		return sqsCall(s.queueURL(target), string(r.Body), v)
	case domain.TypeSNS:
		return snsCall(target.String(), string(r.Body), v)
	default:
		return ebCall(target.String(), r.Body, v, ts)
	}
}

// queueURL is the target queue's URL: under cfg's endpoint override when
// there is one (a local cloud's queue URLs are ENDPOINT/ACCOUNT/NAME),
// else SQS's regional endpoint in the ARN's partition.
func (s *Sender) queueURL(a arn.ARN) string {
	if s.cfg.BaseEndpoint != nil {
		return strings.TrimRight(*s.cfg.BaseEndpoint, "/") + "/" + a.Account + "/" + a.Resource
	}
	suffix := "amazonaws.com"
	switch a.Partition {
	case "aws-cn":
		suffix = "amazonaws.com.cn"
	case "aws-iso":
		suffix = "c2s.ic.gov"
	case "aws-iso-b":
		suffix = "sc2s.sgov.gov"
	}
	return "https://sqs." + a.Region + "." + suffix + "/" + a.Account + "/" + a.Resource
}

func invalid(why string) sender.Result {
	return sender.Result{Outcome: sender.Dead, Error: "invalid_destination", Reason: domain.ReasonInvalidDestination, Excerpt: clip(why)}
}
