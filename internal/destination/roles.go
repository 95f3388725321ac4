package destination

import (
	"container/list"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/sender"
)

// What a role's session is asked for and kept.
const (
	// SessionNamePrefix starts the RoleSessionName of every endpoint's
	// session (SessionName): the customer's CloudTrail shows
	// assumed-role/ROLE/hookline-<endpoint id> for each call.
	SessionNamePrefix = "hookline-"
	// SessionNameUnknown is the RoleSessionName when the attempt names no
	// endpoint (never, from deliver): the name every session had before
	// the names were per endpoint.
	SessionNameUnknown = "hookline-delivery"
	// MaxSessionName is the longest RoleSessionName STS takes.
	MaxSessionName = 64
	// SessionDuration is the longest STS grants a session assumed with a
	// role session's credentials (role chaining), as a Lambda function's
	// are: one hour.
	SessionDuration = time.Hour
	// RefreshBefore is how long before a session expires it is renewed.
	RefreshBefore = 5 * time.Minute
	// RefusedFor is how long a refused AssumeRole is answered from memory,
	// so that a burst of deliveries to a misconfigured role makes one STS
	// call, not one each.
	RefusedFor = 10 * time.Second
	// MaxRoles is how many (role, external ID) sessions a warm instance
	// keeps, the least recently used forgotten first.
	MaxRoles = 1024
	// MaxRolesPerTenant is how many of those one tenant's endpoints may
	// hold: a tenant's session past it forgets that tenant's own least
	// recently used, never another tenant's. It is the endpoint cap's
	// default (domain.DefaultMaxEndpoints), so a tenant within the cap has
	// each of its roles assumed once a session (an hour) per warm
	// instance, and one tenant's many roles can neither evict more than
	// a tenth of the cache nor turn every other tenant's delivery into an
	// AssumeRole (STS's rate is the account's, shared by every tenant).
	MaxRolesPerTenant = domain.DefaultMaxEndpoints
)

// SessionName is the RoleSessionName of endpointID's session, within
// STS's rules (2 to 64 of [\w+=,.@-], \w ASCII): SessionNamePrefix and
// the endpoint id (hookline's are "ep_" and 16 base32 characters: 28 in
// all), any other character as "-", cut at MaxSessionName;
// SessionNameUnknown for "". The customer's CloudTrail tells endpoints
// apart by it, and a trust policy may require it (sts:RoleSessionName).
func SessionName(endpointID string) string {
	if endpointID == "" {
		return SessionNameUnknown
	}
	b := make([]byte, 0, len(SessionNamePrefix)+len(endpointID))
	b = append(b, SessionNamePrefix...)
	for i := 0; i < len(endpointID) && len(b) < MaxSessionName; i++ {
		c := endpointID[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_+=,.@-", c) >= 0) {
			c = '-'
		}
		b = append(b, c)
	}
	return string(b)
}

// roleKey names a session: the tenant, the endpoint (its session name),
// the role and the external ID it is assumed with.
type roleKey struct{ tenant, endpoint, role, externalID string }

// role is one session's credentials, its service clients by region and
// a recent refusal.
type role struct {
	key   roleKey
	creds *aws.CredentialsCache
	// refusedUntil, while in the future, answers refused instead of STS.
	refusedUntil time.Time
	refused      sender.Result
	clients      map[string]*clients
}

// clients are one session's clients of one region, each built on first use.
type clients struct {
	sqs *sqs.Client
	sns *sns.Client
	eb  *eventbridge.Client
}

// roles is the bounded, least-recently-used cache of sessions. The lock
// is held for map work only, never across a call.
type roles struct {
	mu sync.Mutex
	// max is the sessions kept in all, perTenant those of one tenant.
	max, perTenant int
	ll             *list.List // of *role, the most recently used first
	m              map[roleKey]*list.Element
	// held counts each tenant's sessions kept.
	held map[string]int
	// probes are the roles' probes, by role ARN, at most max of them.
	probes map[string]probed
}

func newRoles(max, perTenant int) *roles {
	return &roles{max: max, perTenant: perTenant, ll: list.New(), m: map[roleKey]*list.Element{}, held: map[string]int{}, probes: map[string]probed{}}
}

// probed is what the last probe of role found, if it is remembered.
func (rs *roles) probed(role string) (probed, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	p, ok := rs.probes[role]
	return p, ok
}

// forgetProbe forgets role's probe: the role refused its own external ID
// too, so the probe proved nothing of a trust policy that may yet change.
func (rs *roles) forgetProbe(role string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	delete(rs.probes, role)
}

// setProbed remembers a probe of role; past max roles, one other is
// forgotten (and probed again when next used).
func (rs *roles) setProbed(role string, p probed) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if _, ok := rs.probes[role]; !ok && len(rs.probes) >= rs.max {
		for k := range rs.probes {
			delete(rs.probes, k)
			break
		}
	}
	rs.probes[role] = p
}

// get returns k's session, made by mk when it is not kept. A tenant at its
// share forgets its own least recently used session first; past the
// bound in all, the least recently used of any tenant is forgotten.
func (rs *roles) get(k roleKey, mk func() *aws.CredentialsCache) *role {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if e, ok := rs.m[k]; ok {
		rs.ll.MoveToFront(e)
		return e.Value.(*role)
	}
	if rs.held[k.tenant] >= rs.perTenant {
		// The walk is over at most max entries, and only when a tenant
		// at its share brings one more role.
		for e := rs.ll.Back(); e != nil; e = e.Prev() {
			if e.Value.(*role).key.tenant == k.tenant {
				rs.forget(e)
				break
			}
		}
	}
	r := &role{key: k, creds: mk(), clients: map[string]*clients{}}
	rs.m[k] = rs.ll.PushFront(r)
	rs.held[k.tenant]++
	for rs.ll.Len() > rs.max {
		rs.forget(rs.ll.Back())
	}
	return r
}

// forget drops e's session.
func (rs *roles) forget(e *list.Element) {
	k := e.Value.(*role).key
	rs.ll.Remove(e)
	delete(rs.m, k)
	if rs.held[k.tenant]--; rs.held[k.tenant] <= 0 {
		delete(rs.held, k.tenant)
	}
}

// refusal is r's remembered refusal, if it has not lapsed at now.
func (rs *roles) refusal(r *role, now time.Time) (sender.Result, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return r.refused, now.Before(r.refusedUntil)
}

// refuse remembers res, AssumeRole's refusal, until RefusedFor after now.
func (rs *roles) refuse(r *role, res sender.Result, now time.Time) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r.refused, r.refusedUntil = res, now.Add(RefusedFor)
}

// region returns r's clients of region, built with cfg (the session's
// credentials already set) on first use.
func (rs *roles) region(r *role, region string, cfg aws.Config) *clients {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	c, ok := r.clients[region]
	if !ok {
		cfg.Region, cfg.Credentials = region, r.creds
		c = &clients{sqs: sqs.NewFromConfig(cfg), sns: sns.NewFromConfig(cfg), eb: eventbridge.NewFromConfig(cfg)}
		r.clients[region] = c
	}
	return c
}

// assumer makes k's credentials: AssumeRole as the endpoint's session
// (SessionName) with its external ID and the session policy, for
// SessionDuration, cached until RefreshBefore its expiry.
func assumer(client stscreds.AssumeRoleAPIClient, k roleKey, policy string) *aws.CredentialsCache {
	p := stscreds.NewAssumeRoleProvider(client, k.role, func(o *stscreds.AssumeRoleOptions) {
		o.RoleSessionName = SessionName(k.endpoint)
		o.Duration = SessionDuration
		o.ExternalID = aws.String(k.externalID)
		o.Policy = aws.String(policy)
	})
	return aws.NewCredentialsCache(p, func(o *aws.CredentialsCacheOptions) { o.ExpiryWindow = RefreshBefore })
}
