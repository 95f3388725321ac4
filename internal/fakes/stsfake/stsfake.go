// Package stsfake is STS's AssumeRole for tests, over HTTP (package
// awsfake), held to the rules a cross-account role assumed by a Lambda
// function meets on AWS and the local cloud forgives:
//
//   - the role must exist, else AccessDenied (STS says no more than that);
//   - its trust policy must name the caller: the caller's role ARN, its
//     account's root ("arn:aws:iam::ACCOUNT:root") or the account id;
//   - when the trust policy requires sts:ExternalId, the one sent must
//     equal it (StringEquals), else AccessDenied;
//   - DurationSeconds 900..3600 when the caller is itself a role session
//     (role chaining, as a Lambda function's credentials are), else up to
//     the role's maximum session duration;
//   - RoleSessionName 2 to 64 of [\w+=,.@-] (\w ASCII only: letters,
//     digits, underscore); ExternalId 2 to 1224 of
//     [\w+=,.@:/-]; a malformed request is a ValidationError;
//   - a session policy (Policy, at most 2048 characters, else a
//     ValidationError; JSON that is not a policy is
//     MalformedPolicyDocument) narrows the session: what it does must be
//     allowed by the role and by the policy, and denied by neither (an
//     explicit Deny wins). Actions and resources match exactly or by
//     "*".
//
// A granted session's credentials expire as STS says (Config.Now), and the
// fake remembers which role each access key belongs to (Principal), so that
// the service fakes can authorize a request by the role whose credentials
// signed it (Allowed).
package stsfake

import (
	"encoding/xml"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hookline/hookline/internal/fakes/awsfake"
)

// STS's limits on AssumeRole.
const (
	MinDuration         = 900
	MaxChainedDuration  = 3600
	DefaultMaxDuration  = 3600
	MaxExternalIDLength = 1224
)

var (
	sessionNameRE = regexp.MustCompile(`^[\w+=,.@-]{2,64}$`)
	externalIDRE  = regexp.MustCompile(`^[\w+=,.@:/-]+$`)
)

// Role is a role that can be assumed.
type Role struct {
	// ARN is the role's, arn:aws:iam::ACCOUNT:role/NAME.
	ARN string
	// Trusted are the principals its trust policy names: role ARNs,
	// "arn:aws:iam::ACCOUNT:root" or account ids.
	Trusted []string
	// ExternalID, when set, is the trust policy's StringEquals
	// sts:ExternalId condition.
	ExternalID string
	// MaxDuration is the role's maximum session duration in seconds; zero
	// is 3600.
	MaxDuration int
	// Allow lists what the role's permissions policy allows: an action
	// ("sqs:SendMessage") to the resource ARNs it may act on.
	Allow map[string][]string
}

// Caller is an identity that calls STS with its own credentials.
type Caller struct {
	// RoleARN is the caller's role (arn:aws:iam::ACCOUNT:role/NAME).
	RoleARN string
	// Session: the caller's credentials are a role session (a Lambda
	// function's are), so what it assumes is role chaining.
	Session bool
}

// Config sets up a Fake.
type Config struct {
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Fail, if set, is asked before each AssumeRole; an error it returns is
	// the answer (an awsfake.Error for a status and code).
	Fail func(roleARN string) error
}

// Fake is STS. Safe for concurrent use.
type Fake struct {
	cfg      Config
	mu       sync.Mutex
	roles    map[string]Role
	callers  map[string]Caller
	sessions map[string]session
	calls    int
	seqKey   int
}

type session struct {
	role string
	// arn is the assumed-role ARN (arn:aws:sts::ACCOUNT:assumed-role/
	// ROLE/SESSION): what the role's account sees in CloudTrail.
	arn     string
	expires time.Time
	// policy is the session policy's statements; nil: none was passed.
	policy []statement
}

// New returns an STS that knows no role and no caller.
func New(cfg Config) *Fake {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Fake{cfg: cfg, roles: map[string]Role{}, callers: map[string]Caller{}, sessions: map[string]session{}}
}

// AddRole creates (or replaces) a role.
func (f *Fake) AddRole(r Role) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.roles[r.ARN] = r
}

// AddCaller names the identity whose requests are signed with accessKey.
func (f *Fake) AddCaller(accessKey string, c Caller) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.callers[accessKey] = c
}

// Calls is how many AssumeRole requests reached the fake.
func (f *Fake) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// Principal is the role whose unexpired session accessKey belongs to.
func (f *Fake) Principal(accessKey string) (roleARN string, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sessions[accessKey]
	if !ok || !f.cfg.Now().Before(s.expires) {
		return "", false
	}
	return s.role, true
}

// AssumedRoleARN is the assumed-role ARN of the unexpired session
// accessKey belongs to, arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION:
// the identity the role's account sees in CloudTrail for every call the
// session makes, its last part the RoleSessionName.
func (f *Fake) AssumedRoleARN(accessKey string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sessions[accessKey]
	if !ok || !f.cfg.Now().Before(s.expires) {
		return "", false
	}
	return s.arn, true
}

// Allowed reports whether the request signed with accessKey may do action
// on resource: the key is an unexpired session of a role whose Allow
// lists the resource for the action, and the session's policy, if any,
// allows it and does not deny it.
func (f *Fake) Allowed(accessKey, action, resource string) bool {
	role, ok := f.Principal(accessKey)
	if !ok {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.sessions[accessKey].policy; p != nil && !policyAllows(p, action, resource) {
		return false
	}
	for _, r := range f.roles[role].Allow[action] {
		if r == resource || r == "*" {
			return true
		}
	}
	return false
}

// ServeHTTP answers AssumeRole, the one action the fake has.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("Action") != "AssumeRole" {
		awsfake.WriteQueryError(w, awsfake.Errorf(400, "InvalidAction", "the fake answers AssumeRole only"))
		return
	}
	if f.cfg.Fail != nil {
		if err := f.cfg.Fail(r.PostForm.Get("RoleArn")); err != nil {
			awsfake.WriteQueryError(w, err)
			return
		}
	}
	out, err := f.assume(awsfake.Scope(r).AccessKey, r.PostForm)
	if err != nil {
		awsfake.WriteQueryError(w, err)
		return
	}
	awsfake.WriteXML(w, out)
}

type assumeRoleResponse struct {
	XMLName xml.Name `xml:"AssumeRoleResponse"`
	Result  struct {
		Credentials struct {
			AccessKeyID     string `xml:"AccessKeyId"`
			SecretAccessKey string `xml:"SecretAccessKey"`
			SessionToken    string `xml:"SessionToken"`
			Expiration      string `xml:"Expiration"`
		} `xml:"Credentials"`
		AssumedRoleUser struct {
			Arn           string `xml:"Arn"`
			AssumedRoleID string `xml:"AssumedRoleId"`
		} `xml:"AssumedRoleUser"`
	} `xml:"AssumeRoleResult"`
}

type form interface{ Get(string) string }

// assume applies the rules to one AssumeRole by the caller signing with
// key and, if they pass, starts a session.
func (f *Fake) assume(key string, in form) (*assumeRoleResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	roleARN, name, ext := in.Get("RoleArn"), in.Get("RoleSessionName"), in.Get("ExternalId")
	dur, err := strconv.Atoi(cmpOr(in.Get("DurationSeconds"), "3600"))
	if err != nil {
		return nil, awsfake.Errorf(400, "ValidationError", "DurationSeconds %q is not a number", in.Get("DurationSeconds"))
	}
	if err := checkInput(roleARN, name, ext); err != nil {
		return nil, err
	}
	caller, ok := f.callers[key]
	if !ok {
		return nil, awsfake.Errorf(403, "InvalidClientTokenId", "The security token included in the request is invalid.")
	}
	role, ok := f.roles[roleARN]
	if !ok || !trusts(role, caller.RoleARN) || role.ExternalID != "" && role.ExternalID != ext {
		return nil, awsfake.Errorf(403, "AccessDenied", "User: %s is not authorized to perform: sts:AssumeRole on resource: %s", caller.RoleARN, roleARN)
	}
	if err := checkDuration(dur, role, caller); err != nil {
		return nil, err
	}
	policy, err := parsePolicy(in.Get("Policy"))
	if err != nil {
		return nil, err
	}
	f.seqKey++
	out := &assumeRoleResponse{}
	c := &out.Result.Credentials
	c.AccessKeyID = "ASIAFAKE" + strconv.Itoa(f.seqKey)
	c.SecretAccessKey, c.SessionToken = "secret-"+c.AccessKeyID, "token-"+c.AccessKeyID
	expires := f.cfg.Now().Add(time.Duration(dur) * time.Second).UTC()
	c.Expiration = expires.Format(time.RFC3339)
	out.Result.AssumedRoleUser.Arn = strings.Replace(strings.Replace(roleARN, ":iam:", ":sts:", 1), ":role/", ":assumed-role/", 1) + "/" + name
	out.Result.AssumedRoleUser.AssumedRoleID = "AROAFAKE:" + name
	f.sessions[c.AccessKeyID] = session{role: roleARN, arn: out.Result.AssumedRoleUser.Arn, expires: expires, policy: policy}
	return out, nil
}
