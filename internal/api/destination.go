package api

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/hookline/hookline/internal/destination/arn"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/sealing"
)

// DestinationRules are what a deployment accepts as an AWS destination (an
// endpoint of type sqs, sns or eventbridge): the api function reads them
// from its environment (fnenv.APIEnv.Destinations).
type DestinationRules struct {
	// Partition is the stack's partition ("aws", "aws-cn", ...): a target
	// or role in another is refused. Empty: "aws".
	Partition string
	// Account is the stack's account: hookline's own resources are in it.
	// Empty: no account is known to be the stack's (tests).
	Account string
	// StackName is the stack's name: in Account, a queue, topic, bus or
	// role whose name begins with it is hookline's own (CloudFormation
	// names the resources it names <stack>-<logical id>-<suffix>, CDK's
	// event buses <stack><path>), and refused.
	StackName string
	// Regions are the regions a target may be in. Empty: none, so no AWS
	// destination can be registered.
	Regions []string
	// Roles are the ARN patterns of the roles the deliver function may
	// assume (IAM's ArnLike: * and ?, part by part): a role_arn none
	// matches is refused, naming them, as the deliver role's policy would
	// refuse it at every attempt. Empty: any role (tests; the stack sets
	// Props.DestinationRoles, by default roles named hookline-*).
	Roles []string
	// OwnResources are the exact ARNs of the stack's own queues, topics,
	// event bus and roles: a target or role_arn equal to one is refused,
	// whatever its name and OwnAccount.
	OwnResources []string
	// OwnAccount lets targets and roles be in Account (other than
	// hookline's own resources and the CDK bootstrap's roles). Default
	// false: the stack's account is refused as a whole, as a role there
	// that trusts its own account would lend the deliver function its
	// permissions (the local cloud, one account for all, sets it).
	OwnAccount bool
}

// ExternalIDPrefix starts every external ID hookline generates.
const ExternalIDPrefix = "hlx_"

// newExternalID returns a new external ID: ExternalIDPrefix and 160 random
// bits in lower-case base32, within STS's ExternalId characters
// ([\w+=,.@:/-], 2 to 1224 of them).
func newExternalID(random io.Reader) (string, error) {
	var b [20]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("external id: %w", err)
	}
	return ExternalIDPrefix + idEncoding.EncodeToString(b[:]), nil
}

// endpointType is the type an endpoint input names: http when absent or
// null. An empty string is named, not absent: checkDestination refuses it.
func (in endpointInput) endpointType() domain.EndpointType {
	if in.Type == nil {
		return domain.TypeHTTP
	}
	return domain.EndpointType(*in.Type)
}

// checkDestination adds what is wrong with in's type, url, headers, target
// and role_arn, for an endpoint of type t (the type in names on create,
// the stored one on update; create requires what the type needs).
func (s *Server) checkDestination(errs *fieldErrors, in endpointInput, t domain.EndpointType, create bool) {
	switch {
	case in.Type != nil && !domain.EndpointType(*in.Type).Valid():
		errs.add("type", "is %q, must be http, sqs, sns or eventbridge", *in.Type)
		return
	case !create && in.Type != nil && domain.EndpointType(*in.Type) != t:
		errs.add("type", "is %s and cannot be changed: create a new endpoint of type %s", t, *in.Type)
		return
	case t == domain.TypeHTTP:
		refuse(errs, "target", in.Target, "is for the AWS types (sqs, sns, eventbridge), not http")
		refuse(errs, "role_arn", in.RoleARN, "is for the AWS types (sqs, sns, eventbridge), not http")
		if in.URL == nil && create {
			errs.add("url", "is required")
		}
		return
	}
	refuse(errs, "url", in.URL, fmt.Sprintf("is for type http; an endpoint of type %s delivers to its target", t))
	if in.Headers != nil && len(*in.Headers) > 0 {
		errs.add("headers", "are for type http; an endpoint of type %s carries hookline's webhook-* values as message attributes only", t)
	}
	if len(s.Destinations.Regions) == 0 {
		errs.add("type", "is %s, but this deployment accepts no AWS destination (no destination region is configured)", t)
		return
	}
	if in.Target == nil && create {
		errs.add("target", "is required for type %s: the ARN of your %s", t, what(t))
	} else if in.Target != nil {
		if msg := s.Destinations.checkTarget(t, *in.Target); msg != "" {
			errs.add("target", "%s", msg)
		}
	}
	if in.RoleARN == nil && create {
		errs.add("role_arn", "is required for type %s: the ARN of the role in your account that hookline assumes", t)
	} else if in.RoleARN != nil {
		if msg := s.Destinations.checkRole(*in.RoleARN); msg != "" {
			errs.add("role_arn", "%s", msg)
		}
	}
}

// refuse adds field's message when v is present.
func refuse(errs *fieldErrors, field string, v *string, msg string) {
	if v != nil {
		errs.add(field, "%s", msg)
	}
}

// what names the resource a type delivers to.
func what(t domain.EndpointType) string {
	switch t {
	case domain.TypeSQS:
		return "SQS queue"
	case domain.TypeSNS:
		return "SNS topic"
	}
	return "EventBridge event bus"
}

// checkTarget says what is wrong with an AWS destination's target ARN, or
// nothing.
func (r DestinationRules) checkTarget(t domain.EndpointType, s string) string {
	if len(s) > 2048 {
		return fmt.Sprintf("is %d bytes, at most 2048", len(s))
	}
	a, err := arn.ParseTarget(t, s)
	if err != nil {
		return err.Error()
	}
	if msg := r.checkPartition(a); msg != "" {
		return msg
	}
	if !slices.Contains(r.Regions, a.Region) {
		return fmt.Sprintf("is in region %q; this deployment delivers to %s only", a.Region, strings.Join(r.Regions, ", "))
	}
	if slices.Contains(r.OwnResources, s) {
		return "is a resource of hookline's own stack: refused"
	}
	return r.checkOwner(a, a.Name(), false)
}

// checkRole says what is wrong with an AWS destination's role ARN, or
// nothing.
func (r DestinationRules) checkRole(s string) string {
	if len(s) > 2048 {
		return fmt.Sprintf("is %d bytes, at most 2048", len(s))
	}
	a, err := arn.ParseRole(s)
	if err != nil {
		return err.Error()
	}
	if msg := r.checkPartition(a); msg != "" {
		return msg
	}
	if slices.Contains(r.OwnResources, s) {
		return "is a role of hookline's own stack: refused"
	}
	if len(r.Roles) > 0 && !slices.ContainsFunc(r.Roles, func(p string) bool { return arn.Like(p, s) }) {
		return fmt.Sprintf("is not a role this deployment may assume: name your role to match %s (hookline's deliver role may assume no other)", strings.Join(r.Roles, " or "))
	}
	name := a.Name()
	if r.Account != "" && a.Account == r.Account && strings.HasPrefix(strings.ToLower(name), "cdk-") {
		return "is a role of the CDK bootstrap in hookline's own account: refused"
	}
	// A role's name is held to the stack's prefix as CloudFormation
	// writes it (case and hyphen: Hookline-ApiRole...), not folded:
	// customers name theirs hookline-* (DestinationRoles), which a stack
	// named Hookline begins too when case is ignored. hookline's own roles
	// are also refused by their exact ARNs above, the deliver role may not
	// assume them (DenyHooklineRoles), and the session policy keeps any
	// session off hookline's own resources.
	return r.checkOwner(a, name, true)
}

func (r DestinationRules) checkPartition(a arn.ARN) string {
	if p := cmp.Or(r.Partition, "aws"); a.Partition != p {
		return fmt.Sprintf("is in partition %q; this deployment is in %q", a.Partition, p)
	}
	return ""
}

// checkOwner refuses hookline's own resources: in the stack's account,
// everything unless OwnAccount, and with it a name that begins with the
// stack's (exactly "<stack>-" when exact, else in any case).
func (r DestinationRules) checkOwner(a arn.ARN, name string, exact bool) string {
	if r.Account == "" || a.Account != r.Account {
		return ""
	}
	if !r.OwnAccount {
		return fmt.Sprintf("is in account %s, hookline's own: a destination must be in your account", a.Account)
	}
	own := r.StackName != "" && strings.HasPrefix(strings.ToLower(name), strings.ToLower(r.StackName))
	if exact {
		own = r.StackName != "" && strings.HasPrefix(name, r.StackName+"-")
	}
	if own {
		return fmt.Sprintf("names %q, a resource of hookline's own stack: refused", name)
	}
	return ""
}

// storedKind sets in.kind to the stored endpoint's type when the update
// touches what depends on it (url, headers, target, role_arn, type), so
// that validate checks them for that type, and returns the stored
// endpoint when the update sets a field that counts towards its size (the
// endpoint_bytes cap is held on the result): a missing endpoint is 404.
// One GetItem, on an update of those fields only.
func (s *Server) storedKind(r *http.Request, tenant, id string, in *endpointInput) (*domain.Endpoint, *Problem) {
	if in.Type == nil && !in.sizeChanges() {
		return nil, nil
	}
	e, err := s.Store.Endpoint(r.Context(), tenant, id)
	if err != nil {
		return nil, s.found(r, "endpoint "+strconv.Quote(id), err)
	}
	in.kind = e.Kind()
	return &e, nil
}

// sealExternalID makes an AWS endpoint's external ID and seals it like a
// signing secret (the same key and encryption context). It returns the
// plaintext, shown once in the create answer, and the sealed form stored.
func (s *Server) sealExternalID(ctx context.Context, ref sealing.Ref) (plain, sealed string, err error) {
	plain, err = newExternalID(s.random())
	if err != nil {
		return "", "", err
	}
	sealed, err = s.seal(ctx, ref, plain)
	return plain, sealed, err
}

// setDestination fills a new endpoint's type, target, role and sealed
// external ID from in; it returns the external ID to show once ("" for
// http).
func (s *Server) setDestination(ctx context.Context, e *domain.Endpoint, in endpointInput) (string, error) {
	t := in.endpointType()
	if t == domain.TypeHTTP {
		return "", nil
	}
	e.Type, e.Target, e.RoleARN = t, *in.Target, *in.RoleARN
	plain, sealed, err := s.sealExternalID(ctx, sealing.Ref{TenantID: e.TenantID, EndpointID: e.EndpointID})
	if err != nil {
		return "", err
	}
	e.SealedExternalID = sealed
	return plain, nil
}
