package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/destination/arn"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/sealing/sealingtest"
	"github.com/stretchr/testify/require"
)

// The stack's account and name in these tests, and a customer's account.
const (
	stackAccount    = "111111111111"
	customerAccount = "222222222222"
)

func withDestinations(e *env, ownAccount bool) *env {
	e.srv.Destinations = api.DestinationRules{
		Partition: "aws", Account: stackAccount, StackName: "Hookline", Regions: []string{"eu-west-1", "eu-central-1"},
		OwnAccount: ownAccount,
	}
	e.h = e.srv.Handler()
	return e
}

var customerRole = "arn:aws:iam::" + customerAccount + ":role/hookline-delivery"

// awsTargets are a valid target of each AWS type, in the customer's account.
var awsTargets = map[domain.EndpointType]string{
	domain.TypeSQS:         "arn:aws:sqs:eu-west-1:" + customerAccount + ":orders",
	domain.TypeSNS:         "arn:aws:sns:eu-west-1:" + customerAccount + ":orders",
	domain.TypeEventBridge: "arn:aws:events:eu-central-1:" + customerAccount + ":event-bus/orders",
}

// externalIDRE is STS's ExternalId (2 to 1224, here at most 1000) of [\w+=,.@:/-].
var externalIDRE = regexp.MustCompile(`^[\w+=,.@:/-]{2,1000}$`)

func TestCreateAWSDestination(t *testing.T) {
	t.Parallel()
	e := withDestinations(newEnv(t), false)
	key := e.newTenant("t1")
	for typ, target := range awsTargets {
		t.Run(string(typ), func(t *testing.T) {
			rec := e.do("POST", "/v1/endpoints", key, map[string]any{
				"type": typ, "target": target, "role_arn": customerRole, "event_types": []string{"order.*"},
			})
			require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
			v := decodeJSON[api.EndpointView](t, rec)
			require.Equal(t, typ, v.Type)
			require.Equal(t, target, v.Target)
			require.Equal(t, customerRole, v.RoleARN)
			require.Empty(t, v.URL)
			require.NotEmpty(t, v.Secret, "the signature travels in message attributes: the endpoint has a secret")
			require.Regexp(t, externalIDRE, v.ExternalID)
			require.True(t, strings.HasPrefix(v.ExternalID, api.ExternalIDPrefix))

			// Stored sealed, with the signing secret's key and context.
			stored, ok := e.store.endpoint("t1", v.ID)
			require.True(t, ok)
			require.NotContains(t, stored.SealedExternalID, v.ExternalID)
			o := &sealing.Opener{KMS: e.kms, KeyID: sealingtest.KeyARN}
			plain, err := o.Open(context.Background(), sealing.Ref{TenantID: "t1", EndpointID: v.ID}, stored.SealedExternalID)
			require.NoError(t, err)
			require.Equal(t, v.ExternalID, plain)
			require.NotContains(t, e.logs.String(), v.ExternalID, "never logged")

			// Shown once: GET and the list show the type, target and role only.
			got := e.getEndpoint(key, v.ID)
			require.Empty(t, got.ExternalID)
			require.Equal(t, typ, got.Type)
			require.Equal(t, target, got.Target)
			require.NotContains(t, e.do("GET", "/v1/endpoints", key, nil).Body.String(), v.ExternalID)
		})
	}
	// Two endpoints never share an external ID.
	a := e.createEndpoint(key, map[string]any{"type": "sqs", "target": awsTargets[domain.TypeSQS], "role_arn": customerRole})
	b := e.createEndpoint(key, map[string]any{"type": "sqs", "target": awsTargets[domain.TypeSQS], "role_arn": customerRole})
	require.NotEqual(t, a.ExternalID, b.ExternalID)
}

func TestHTTPEndpointKeepsItsShape(t *testing.T) {
	t.Parallel()
	e := withDestinations(newEnv(t), false)
	key := e.newTenant("t1")
	v := e.createEndpoint(key, nil)
	require.Equal(t, domain.TypeHTTP, v.Type)
	require.Empty(t, v.ExternalID)
	require.Empty(t, v.Target)
	stored, _ := e.store.endpoint("t1", v.ID)
	require.Empty(t, stored.Type, "an http endpoint is stored as before")
	require.Empty(t, stored.SealedExternalID)
	v = e.createEndpoint(key, map[string]any{"type": "http", "url": "https://hooks.example.com/y"})
	require.Equal(t, domain.TypeHTTP, v.Type)
}

// refusal is a request body and the field its 400 must name, with a part
// of the message.
type refusal struct {
	name  string
	body  map[string]any
	field string
	msg   string
}

func awsBody(typ, target, role string) map[string]any {
	return map[string]any{"type": typ, "target": target, "role_arn": role}
}

func TestAWSDestinationRefusals(t *testing.T) {
	t.Parallel()
	own := "arn:aws:sqs:eu-west-1:" + stackAccount + ":"
	for _, tc := range []refusal{
		{"unknown type", map[string]any{"type": "kinesis", "target": "x"}, "type", "must be http, sqs, sns or eventbridge"},
		{"empty type", map[string]any{"type": "", "url": "https://x.example.com"}, "type", `is "", must be http`},
		{"url with sqs", map[string]any{"type": "sqs", "url": "https://x.example.com", "target": awsTargets[domain.TypeSQS], "role_arn": customerRole}, "url", "is for type http"},
		{"headers with sns", map[string]any{"type": "sns", "headers": map[string]string{"X-A": "b"}, "target": awsTargets[domain.TypeSNS], "role_arn": customerRole}, "headers", "are for type http"},
		{"target with http", map[string]any{"url": "https://x.example.com", "target": awsTargets[domain.TypeSQS]}, "target", "not http"},
		{"role with http", map[string]any{"url": "https://x.example.com", "role_arn": customerRole}, "role_arn", "not http"},
		{"no url for http", map[string]any{"type": "http"}, "url", "is required"},
		{"no target", map[string]any{"type": "sqs", "role_arn": customerRole}, "target", "is required"},
		{"no role", map[string]any{"type": "sqs", "target": awsTargets[domain.TypeSQS]}, "role_arn", "is required"},
		{"not an ARN", awsBody("sqs", "orders", customerRole), "target", "is not an ARN"},
		{"topic ARN for sqs", awsBody("sqs", awsTargets[domain.TypeSNS], customerRole), "target", "sqs ARN"},
		{"queue URL for sqs", awsBody("sqs", "https://sqs.eu-west-1.amazonaws.com/"+customerAccount+"/orders", customerRole), "target", "is not an ARN"},
		{"fifo queue", awsBody("sqs", awsTargets[domain.TypeSQS]+".fifo", customerRole), "target", "FIFO"},
		{"bus without event-bus/", awsBody("eventbridge", "arn:aws:events:eu-west-1:"+customerAccount+":orders", customerRole), "target", "event-bus/"},
		{"region not allowed", awsBody("sqs", "arn:aws:sqs:us-east-1:"+customerAccount+":orders", customerRole), "target", `region "us-east-1"`},
		{"other partition", awsBody("sqs", "arn:aws-cn:sqs:eu-west-1:"+customerAccount+":orders", customerRole), "target", `partition "aws-cn"`},
		{"role of other partition", awsBody("sqs", awsTargets[domain.TypeSQS], "arn:aws-us-gov:iam::"+customerAccount+":role/x"), "role_arn", "partition"},
		{"role is a user", awsBody("sqs", awsTargets[domain.TypeSQS], "arn:aws:iam::"+customerAccount+":user/x"), "role_arn", "not a role"},
		{"role with region", awsBody("sqs", awsTargets[domain.TypeSQS], "arn:aws:iam:eu-west-1:"+customerAccount+":role/x"), "role_arn", "no region"},
		{"our delivery queue", awsBody("sqs", own+"Hookline-DeliveryQueue-ABC", customerRole), "target", "hookline's own"},
		{"our role", awsBody("sqs", awsTargets[domain.TypeSQS], "arn:aws:iam::"+stackAccount+":role/Hookline-DeliverRole-XYZ"), "role_arn", "hookline's own"},
		{"a role in our account", awsBody("sqs", awsTargets[domain.TypeSQS], "arn:aws:iam::"+stackAccount+":role/admin"), "role_arn", "hookline's own"},
		{"the CDK deploy role", awsBody("sqs", awsTargets[domain.TypeSQS], "arn:aws:iam::"+stackAccount+":role/cdk-hnb659fds-deploy-role-"+stackAccount+"-eu-west-1"), "role_arn", "CDK bootstrap"},
		{"our bus", awsBody("eventbridge", "arn:aws:events:eu-west-1:"+stackAccount+":event-bus/HooklineDefaultBus1234", customerRole), "target", "hookline's own"},
		{"our alarm topic", awsBody("sns", "arn:aws:sns:eu-west-1:"+stackAccount+":Hookline-AlarmTopic-1", customerRole), "target", "hookline's own"},
		{"target too long", awsBody("sqs", strings.Repeat("a", 2049), customerRole), "target", "at most 2048"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := withDestinations(newEnv(t), false)
			key := e.newTenant("t1")
			requireRefused(t, e.do("POST", "/v1/endpoints", key, tc.body), tc.field, tc.msg)
		})
	}
}

func requireRefused(t *testing.T, rec *httptest.ResponseRecorder, field, msg string) {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	var p api.Problem
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
	for _, fe := range p.Errors {
		if fe.Field == field {
			require.Contains(t, fe.Message, msg)
			return
		}
	}
	require.Failf(t, "field not named", "want %s in %+v", field, p.Errors)
}

// With OwnAccount (the local cloud's one account), a destination in the
// stack's account is accepted, but not hookline's own resources nor the
// CDK bootstrap's roles.
func TestOwnAccountDestinations(t *testing.T) {
	t.Parallel()
	e := withDestinations(newEnv(t), true)
	key := e.newTenant("t1")
	role := "arn:aws:iam::" + stackAccount + ":role/customer-role"
	e.createEndpoint(key, awsBody("sqs", "arn:aws:sqs:eu-west-1:"+stackAccount+":customer-queue", role))
	requireRefused(t, e.do("POST", "/v1/endpoints", key, awsBody("sqs", "arn:aws:sqs:eu-west-1:"+stackAccount+":hookline-DLQ-1", role)), "target", "hookline's own stack")
	requireRefused(t, e.do("POST", "/v1/endpoints", key, awsBody("sqs", awsTargets[domain.TypeSQS], "arn:aws:iam::"+stackAccount+":role/path/Hookline-ApiRole-1")), "role_arn", "hookline's own stack")
	requireRefused(t, e.do("POST", "/v1/endpoints", key, awsBody("sqs", awsTargets[domain.TypeSQS], "arn:aws:iam::"+stackAccount+":role/cdk-hnb659fds-cfn-exec-role")), "role_arn", "CDK bootstrap")
	// A customer's role named hookline-* (the default DestinationRoles)
	// begins as a stack named Hookline does, in another case: taken.
	e.createEndpoint(key, awsBody("sqs", "arn:aws:sqs:eu-west-1:"+stackAccount+":customer-queue", "arn:aws:iam::"+stackAccount+":role/hookline-customer"))
}

// A role none of the deployment's patterns (Props.DestinationRoles)
// matches is refused at registration, naming them: the deliver role's
// policy would refuse it at every attempt. Matching is IAM's: case
// sensitive, at the root path unless the pattern says otherwise.
func TestDestinationRolePatterns(t *testing.T) {
	t.Parallel()
	e := withDestinations(newEnv(t), false)
	e.srv.Destinations.Roles = []string{"arn:aws:iam::*:role/hookline-*"}
	e.h = e.srv.Handler()
	key := e.newTenant("t1")
	v := e.createEndpoint(key, awsBody("sqs", awsTargets[domain.TypeSQS], customerRole))
	for _, role := range []string{
		"arn:aws:iam::" + customerAccount + ":role/admin",
		"arn:aws:iam::" + customerAccount + ":role/Hookline-delivery",
		"arn:aws:iam::" + customerAccount + ":role/team/hookline-delivery",
	} {
		requireRefused(t, e.do("POST", "/v1/endpoints", key, awsBody("sqs", awsTargets[domain.TypeSQS], role)), "role_arn", "name your role to match arn:aws:iam::*:role/hookline-*")
		requireRefused(t, e.do("PATCH", "/v1/endpoints/"+v.ID, key, map[string]any{"role_arn": role}), "role_arn", "name your role to match")
	}
}

// hookline's own resources are refused by their exact ARNs
// (OwnResources), whatever their names: the operator bus's does not begin
// with the stack's, and a name check alone let it through.
func TestOwnResourcesByARN(t *testing.T) {
	t.Parallel()
	bus := "arn:aws:events:eu-west-1:" + stackAccount + ":event-bus/OperatorEvents"
	ownRole := "arn:aws:iam::" + stackAccount + ":role/ops-deliver"
	role := "arn:aws:iam::" + stackAccount + ":role/customer-role"
	e := withDestinations(newEnv(t), true)
	key := e.newTenant("t1")
	// The slip: without the ARNs, names alone decide.
	e.createEndpoint(key, awsBody("eventbridge", bus, role))
	e.createEndpoint(key, awsBody("sqs", awsTargets[domain.TypeSQS], ownRole))

	e.srv.Destinations.OwnResources = []string{bus, ownRole}
	e.h = e.srv.Handler()
	requireRefused(t, e.do("POST", "/v1/endpoints", key, awsBody("eventbridge", bus, role)), "target", "hookline's own stack")
	requireRefused(t, e.do("POST", "/v1/endpoints", key, awsBody("sqs", awsTargets[domain.TypeSQS], ownRole)), "role_arn", "hookline's own stack")
	e.createEndpoint(key, awsBody("eventbridge", "arn:aws:events:eu-west-1:"+stackAccount+":event-bus/customer", role))
}

func TestNoDestinationRegionsRefusesAWSTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("t1")
	requireRefused(t, e.do("POST", "/v1/endpoints", key, awsBody("sqs", awsTargets[domain.TypeSQS], customerRole)), "type", "accepts no AWS destination")
}

func TestUpdateAWSDestination(t *testing.T) {
	t.Parallel()
	e := withDestinations(newEnv(t), false)
	key := e.newTenant("t1")
	v := e.createEndpoint(key, awsBody("sqs", awsTargets[domain.TypeSQS], customerRole))
	path := "/v1/endpoints/" + v.ID

	other := "arn:aws:sqs:eu-central-1:" + customerAccount + ":orders-2"
	role2 := "arn:aws:iam::" + customerAccount + ":role/other"
	rec := e.do("PATCH", path, key, map[string]any{"target": other, "role_arn": role2, "description": "moved"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decodeJSON[api.EndpointView](t, rec)
	require.Equal(t, other, got.Target)
	require.Equal(t, role2, got.RoleARN)
	require.Empty(t, got.ExternalID, "the external ID is shown once, at creation")
	stored, _ := e.store.endpoint("t1", v.ID)
	require.NotEmpty(t, stored.SealedExternalID, "a change keeps the external ID")

	requireRefused(t, e.do("PATCH", path, key, map[string]any{"type": "sns"}), "type", "cannot be changed")
	requireRefused(t, e.do("PATCH", path, key, map[string]any{"target": awsTargets[domain.TypeSNS]}), "target", "sqs ARN")
	requireRefused(t, e.do("PATCH", path, key, map[string]any{"target": "arn:aws:sqs:us-west-2:" + customerAccount + ":q"}), "target", "region")
	requireRefused(t, e.do("PATCH", path, key, map[string]any{"role_arn": "arn:aws:iam::" + stackAccount + ":role/Hookline-x"}), "role_arn", "hookline's own")
	requireRefused(t, e.do("PATCH", path, key, map[string]any{"url": "https://x.example.com"}), "url", "is for type http")
	requireRefused(t, e.do("PATCH", path, key, map[string]any{"headers": map[string]string{"X-A": "b"}}), "headers", "are for type http")
	rec = e.do("PATCH", path, key, map[string]any{"type": "sqs", "event_types": []string{"a.b"}})
	require.Equal(t, http.StatusOK, rec.Code, "naming the type it has is no change: %s", rec.Body.String())

	// An http endpoint takes no target, and its type stays too.
	h := e.createEndpoint(key, nil)
	requireRefused(t, e.do("PATCH", "/v1/endpoints/"+h.ID, key, map[string]any{"target": other}), "target", "not http")
	requireRefused(t, e.do("PATCH", "/v1/endpoints/"+h.ID, key, map[string]any{"type": "sqs"}), "type", "cannot be changed")
	requireRefused(t, e.do("PATCH", "/v1/endpoints/"+h.ID, key, map[string]any{"type": ""}), "type", `is "", must be http`)
	// A null type is absent: http.
	n := e.createEndpoint(key, map[string]any{"type": nil, "url": "https://n.example.com"})
	require.Equal(t, domain.TypeHTTP, n.Type)
	require.Equal(t, http.StatusNotFound, e.do("PATCH", "/v1/endpoints/ep_missing", key, map[string]any{"target": other}).Code)
}

// Whatever a body holds, an AWS endpoint is stored only with a target and
// a role of the shapes its type takes, in an allowed region, outside the
// stack's account, with a sealed external ID; anything else is a 4xx.
func FuzzCreateAWSEndpointBody(f *testing.F) {
	for _, b := range []string{
		`{"type":"sqs","target":"arn:aws:sqs:eu-west-1:222222222222:q","role_arn":"arn:aws:iam::222222222222:role/r"}`,
		`{"type":"eventbridge","target":"arn:aws:events:eu-central-1:222222222222:event-bus/b","role_arn":"arn:aws:iam::222222222222:role/p/r"}`,
		`{"type":"sns","target":"arn:aws:sns:eu-west-1:111111111111:Hookline-x","role_arn":"arn:aws:iam::222222222222:role/r"}`,
		`{"type":"sqs","target":"arn:aws:sqs:eu-west-1:222222222222:q","role_arn":"arn:aws:iam::222222222222:role/r","url":"https://a.example.com"}`,
		`{"type":"http","url":"https://a.example.com","target":null}`,
		`{"type":"","url":"https://a.example.com"}`,
		`{"type":"sqs","target":"arn:aws:sqs:eu-west-1:222222222222:q\u0000","role_arn":"arn:aws:iam::222222222222:role/r"}`,
	} {
		f.Add([]byte(b))
	}
	e := withDestinations(newEnv(f), false)
	key := e.newTenant("acme")
	f.Fuzz(func(t *testing.T, body []byte) {
		e.tb = t
		rec := e.do("POST", "/v1/endpoints", key, body)
		switch {
		case rec.Code == http.StatusCreated:
			v := decodeJSON[api.EndpointView](t, rec)
			stored, ok := e.store.endpoint("acme", v.ID)
			require.True(t, ok)
			if stored.Kind() == domain.TypeHTTP {
				require.Empty(t, stored.Target+stored.RoleARN+stored.SealedExternalID)
				require.NoError(t, e.srv.URLs.CheckURL(stored.URL))
			} else {
				a, err := arn.ParseTarget(stored.Kind(), stored.Target)
				require.NoError(t, err)
				require.Contains(t, e.srv.Destinations.Regions, a.Region)
				require.NotEqual(t, stackAccount, a.Account)
				r, err := arn.ParseRole(stored.RoleARN)
				require.NoError(t, err)
				require.NotEqual(t, stackAccount, r.Account)
				require.Empty(t, stored.URL)
				require.Empty(t, stored.Headers)
				require.NotEmpty(t, stored.SealedExternalID)
				require.Regexp(t, externalIDRE, v.ExternalID)
			}
			require.Equal(t, http.StatusNoContent, e.do("DELETE", "/v1/endpoints/"+v.ID, key, nil).Code)
		case rec.Code >= 400 && rec.Code < 500:
			checkProblem(t, rec)
		default:
			t.Fatalf("status %d for body %q: %s", rec.Code, body, rec.Body.String())
		}
	})
}
