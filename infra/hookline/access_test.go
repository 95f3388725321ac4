package hookline

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/stretchr/testify/require"
)

// Who reaches what on AWS, and the AWS rules the local cloud does not
// enforce there: Lambda's 20 KB resource policy, the key policy, the stream
// filter, IAM authorization and route throttles.

// lambdaPolicyLimit is the largest resource policy Lambda keeps for one
// function; policyBudget what the template may spend of it: half, the
// margin for what the template's intrinsics become once resolved (ARNs,
// the API's id, the stack's name in every logical ID).
const (
	lambdaPolicyLimit = 20 * 1024
	policyBudget      = 10 * 1024
)

// lambdaPermissions are the template's AWS::Lambda::Permission resources
// by the logical ID of the function each adds to, with the size of their
// JSON together: each one's logical ID (the statement's Sid) and
// properties (its principal, action, function and source), not the
// template's metadata, which Lambda never sees.
func (s *synthesized) lambdaPermissions(t *testing.T) (perms map[string][]obj, size map[string]int) {
	t.Helper()
	perms, size = map[string][]obj{}, map[string]int{}
	for id, raw := range dig(t, s.json, "Resources").(obj) {
		r := raw.(obj)
		if r["Type"] != "AWS::Lambda::Permission" {
			continue
		}
		var fn string
		switch ref := dig(t, r, "Properties", "FunctionName").(type) {
		case obj:
			if v, ok := ref["Ref"].(string); ok {
				fn = v
			} else if v, ok := ref["Fn::GetAtt"].(arr); ok {
				fn = v[0].(string)
			}
		}
		require.NotEmpty(t, fn, "permission %s names its function by Ref or GetAtt", id)
		b, err := json.Marshal(obj{id: r["Properties"]})
		require.NoError(t, err)
		perms[fn] = append(perms[fn], r)
		size[fn] += len(b)
	}
	return perms, size
}

// keyPolicy is the signing secrets' key's policy statements.
func (s *synthesized) keyPolicy(t *testing.T) []obj {
	t.Helper()
	id := dig(t, s.json, "Outputs", "SecretsKeyARN", "Value", "Fn::GetAtt").(arr)[0].(string)
	var out []obj
	for _, st := range dig(t, s.resource(t, id, "AWS::KMS::Key"), "Properties", "KeyPolicy", "Statement").(arr) {
		out = append(out, st.(obj))
	}
	return out
}

// roleOf is the logical ID of function fnID's execution role.
func (s *synthesized) roleOf(t *testing.T, fnID string) string {
	t.Helper()
	return dig(t, s.resource(t, fnID, "AWS::Lambda::Function"), "Properties", "Role", "Fn::GetAtt").(arr)[0].(string)
}

// strs is a policy element that is a string or a list of them.
func strs(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case arr:
		var out []string
		for _, e := range x {
			out = append(out, fmt.Sprint(e))
		}
		return out
	}
	return nil
}

// grantedTo is every principal (as JSON) that statements allow action,
// IAM's wildcards in the statements' actions matched.
func grantedTo(t *testing.T, statements []obj, action string) []string {
	t.Helper()
	var out []string
	for _, st := range statements {
		require.NotContains(t, st, "NotAction", "a NotAction statement grants what it does not name")
		require.NotContains(t, st, "NotPrincipal")
		if st["Effect"] != "Allow" {
			continue
		}
		for _, pattern := range strs(st["Action"]) {
			if ok, _ := path.Match(strings.ToLower(pattern), strings.ToLower(action)); ok {
				out = append(out, jsonOf(t, st["Principal"]))
				break
			}
		}
	}
	return out
}

// accessWant is what a configuration should produce of what accessChecks
// checks.
type accessWant struct {
	publishRate, adminRate   float64
	publishBurst, adminBurst int
	adminIAM                 bool
	keyAdmins                []string      // nil: the account
	apiRequestDuration       time.Duration // zero: DefaultAPIRequestDuration
}

// requestDuration is the API request duration the configuration assumes.
func (w accessWant) requestDuration() time.Duration {
	if w.apiRequestDuration == 0 {
		return DefaultAPIRequestDuration
	}
	return w.apiRequestDuration
}

// accessChecks are the assertions of this file that hold for every
// configuration: one Lambda permission for the API, each function's
// resource policy within budget, the stream filter, the key policy, the
// route throttles and the operator routes' authorization.
func accessChecks(t *testing.T, s *synthesized, w accessWant) {
	adminIAM, keyAdmins := w.adminIAM, w.keyAdmins
	t.Run("the api function has one Lambda permission, for every route of its API", func(t *testing.T) {
		perms, _ := s.lambdaPermissions(t)
		require.Equal(t, 1, len(perms[s.apiFn]), "one permission covers every route: one per route would fill Lambda's 20 KB resource policy")
		props := perms[s.apiFn][0]["Properties"].(obj)
		require.Equal(t, "apigateway.amazonaws.com", props["Principal"])
		require.Equal(t, "lambda:InvokeFunction", props["Action"])
		source := jsonOf(t, props["SourceArn"])
		var apis []string
		for id, r := range dig(t, s.json, "Resources").(obj) {
			if r.(obj)["Type"] == "AWS::ApiGatewayV2::Api" {
				apis = append(apis, id)
			}
		}
		require.Len(t, apis, 1)
		require.Contains(t, source, `:execute-api:`)
		require.Contains(t, source, jsonOf(t, refTo(apis[0])), "from this API only")
		require.True(t, strings.HasSuffix(source, `"/*/*"]]}`), "every stage, method and route: %s", source)
	})

	t.Run("every function's resource policy stays far under Lambda's 20 KB", func(t *testing.T) {
		_, size := s.lambdaPermissions(t)
		for _, fn := range []string{s.enqueueFn, s.deliverFn, s.apiFn, s.replayFn} {
			t.Logf("%s: Lambda permissions %d bytes of template JSON (budget %d, limit %d)", fn, size[fn], policyBudget, lambdaPolicyLimit)
			require.Less(t, size[fn], policyBudget, "function %s's permissions", fn)
		}
	})

	t.Run("the outbox stream mapping passes INSERT records only", func(t *testing.T) {
		var id *string
		check(t, func() {
			id = s.tpl.GetResourceId(jsii.String("AWS::Lambda::EventSourceMapping"), obj{
				"Properties": obj{"EventSourceArn": getAtt(s.outboxTable, "StreamArn")},
			})
		})
		filters := dig(t, s.resource(t, *id, "AWS::Lambda::EventSourceMapping"), "Properties", "FilterCriteria", "Filters").(arr)
		require.Len(t, filters, 1)
		var pattern any
		require.NoError(t, json.Unmarshal([]byte(filters[0].(obj)["Pattern"].(string)), &pattern))
		require.Equal(t, obj{"eventName": arr{"INSERT"}}, pattern, "the TTL deletes (REMOVE) never invoke enqueue")
	})

	t.Run("key policy: only the deliver role decrypts, the api role and the administrators encrypt, administrators only administer", func(t *testing.T) {
		statements := s.keyPolicy(t)
		b, err := json.MarshalIndent(statements, "", "  ")
		require.NoError(t, err)
		t.Logf("the signing secrets' key policy:\n%s", b)
		// The administrators: the account by default, else those named.
		adminPrincipal := func() obj {
			admins := grantedTo(t, statements, "kms:PutKeyPolicy")
			require.Len(t, admins, 1)
			var principal obj
			require.NoError(t, json.Unmarshal([]byte(admins[0]), &principal))
			return principal
		}()
		if len(keyAdmins) == 0 {
			require.Contains(t, jsonOf(t, adminPrincipal["AWS"]), `":root"`, "the account administers the key")
		} else {
			require.ElementsMatch(t, stringsAny(keyAdmins), strsAny(adminPrincipal["AWS"]))
		}
		// A function's role by aws:PrincipalArn, the principal being the
		// account: KMS checks a condition at each request, a named
		// principal at creation, seconds after the role was created.
		roleByCondition := func(fn string) string {
			return jsonOf(t, obj{"ArnEquals": obj{"aws:PrincipalArn": getAtt(s.roleOf(t, fn), "Arn")}})
		}
		// byRole is the roles granted action by condition; every other
		// statement granting it must be the administrators'.
		byRole := func(action string) (roles []string, admins int) {
			for _, st := range statements {
				if !slices.Contains(strs(st["Action"]), action) {
					continue
				}
				cond := st["Condition"].(obj)
				if arnEq, ok := cond["ArnEquals"]; ok {
					require.Contains(t, jsonOf(t, st["Principal"]), `":root"`, "a function's statement names the account: %v", st)
					roles = append(roles, jsonOf(t, obj{"ArnEquals": arnEq}))
					continue
				}
				require.Equal(t, jsonOf(t, adminPrincipal), jsonOf(t, st["Principal"]), "%s without a role condition: the administrators only", action)
				admins++
			}
			return roles, admins
		}
		roles, admins := byRole("kms:Decrypt")
		require.Equal(t, []string{roleByCondition(s.deliverFn)}, roles, "only the deliver role decrypts")
		require.Zero(t, admins, "administrators never decrypt")
		require.Len(t, grantedTo(t, statements, "kms:Decrypt"), 1)
		roles, admins = byRole("kms:Encrypt")
		require.Equal(t, []string{roleByCondition(s.apiFn)}, roles, "the api role encrypts")
		require.Equal(t, 1, admins, "the administrators encrypt (make seal-secrets)")
		for _, action := range []string{
			"kms:GenerateDataKey", "kms:GenerateDataKeyWithoutPlaintext", "kms:GenerateDataKeyPair",
			"kms:ReEncryptFrom", "kms:ReEncryptTo", "kms:CreateGrant", "kms:Sign", "kms:GenerateMac",
		} {
			require.Empty(t, grantedTo(t, statements, action), "nobody may %s", action)
		}
		purpose := obj{"kms:EncryptionContext:" + sealing.ContextPurpose: sealing.Purpose}
		for _, st := range statements {
			if slices.ContainsFunc(strs(st["Action"]), func(a string) bool { return a == "kms:Decrypt" || a == "kms:Encrypt" }) {
				require.Equal(t, purpose, st["Condition"].(obj)["StringEquals"], "every cryptographic use is for signing secrets only")
			}
			require.NotContains(t, jsonOf(t, st["Principal"]), "Fn::GetAtt", "no principal is a resource of the stack (KMS must see a principal when the key is created)")
		}
		for _, action := range []string{"kms:DescribeKey", "kms:EnableKeyRotation", "kms:RotateKeyOnDemand", "kms:ScheduleKeyDeletion", "kms:CancelKeyDeletion", "kms:TagResource", "kms:GetKeyPolicy"} {
			require.Equal(t, []string{jsonOf(t, adminPrincipal)}, grantedTo(t, statements, action), "administrators may %s", action)
		}
	})

	t.Run("route throttles: the publish route and each operator route apart from the default", func(t *testing.T) {
		var stages *map[string]*map[string]any
		check(t, func() { stages = s.tpl.FindResources(jsii.String("AWS::ApiGatewayV2::Stage"), nil) })
		require.Len(t, *stages, 1)
		routes := s.routesByKey(t)
		for id := range *stages {
			stage := s.resource(t, id, "AWS::ApiGatewayV2::Stage")
			settings := dig(t, stage, "Properties", "RouteSettings").(obj)
			wantKeys := []string{publishRouteKey}
			for _, rt := range api.Routes() {
				if rt.Operator {
					wantKeys = append(wantKeys, rt.Method+" "+rt.Path)
				}
			}
			require.ElementsMatch(t, wantKeys, slices.Collect(maps.Keys(settings)))
			require.Equal(t, obj{"ThrottlingRateLimit": w.publishRate, "ThrottlingBurstLimit": float64(w.publishBurst)}, settings[publishRouteKey])
			for _, key := range wantKeys[1:] {
				require.Equal(t, obj{"ThrottlingRateLimit": w.adminRate, "ThrottlingBurstLimit": float64(w.adminBurst)}, settings[key], key)
			}
			// CloudFormation refuses settings for a route not created yet.
			deps := strs(stage["DependsOn"])
			for _, key := range wantKeys {
				require.Contains(t, deps, routes[key], "the stage waits for route %s", key)
			}
		}
	})

	t.Run("the route throttles admit no more than the api function's reservation runs", func(t *testing.T) {
		reserved, ok := dig(t, s.resource(t, s.apiFn, "AWS::Lambda::Function"), "Properties").(obj)["ReservedConcurrentExecutions"].(float64)
		if !ok {
			t.Skip("no reservation: nothing to fit in")
		}
		var stages *map[string]*map[string]any
		check(t, func() { stages = s.tpl.FindResources(jsii.String("AWS::ApiGatewayV2::Stage"), nil) })
		for id := range *stages {
			props := dig(t, s.resource(t, id, "AWS::ApiGatewayV2::Stage"), "Properties").(obj)
			rate := dig(t, props, "DefaultRouteSettings", "ThrottlingRateLimit").(float64)
			burst := dig(t, props, "DefaultRouteSettings", "ThrottlingBurstLimit").(float64)
			for _, setting := range props["RouteSettings"].(obj) {
				rate += setting.(obj)["ThrottlingRateLimit"].(float64)
				burst += setting.(obj)["ThrottlingBurstLimit"].(float64)
			}
			// Every bucket spent at once, then refilled at its rate over one
			// request at the documented p99 (Props.APIRequestDuration,
			// default unless a test sets it): what API Gateway admits runs
			// at once in at most this many executions.
			need := burst + rate*w.requestDuration().Seconds()
			t.Logf("admitted bursts of %g and %g requests/s: %.1f executions at %s, reserved %g", burst, rate, need, w.requestDuration(), reserved)
			require.LessOrEqual(t, need, reserved, "a Lambda throttle is a 500 from API Gateway: the stage's 429s must come first, in a burst too")
		}
	})

	t.Run("operator routes: IAM authorization when asked, else the operator key", func(t *testing.T) {
		routes := s.routesByKey(t)
		operator := map[string]bool{}
		for _, rt := range api.Routes() {
			operator[rt.Method+" "+rt.Path] = rt.Operator
			require.Equal(t, strings.HasPrefix(rt.Path, "/v1/admin/"), rt.Operator, "the operator routes are the /v1/admin ones: %s", rt.Path)
		}
		for key, id := range routes {
			auth, _ := dig(t, s.resource(t, id, "AWS::ApiGatewayV2::Route"), "Properties").(obj)["AuthorizationType"].(string)
			if adminIAM && operator[key] {
				require.Equal(t, "AWS_IAM", auth, key)
			} else {
				require.Contains(t, []string{"", "NONE"}, auth, key)
			}
		}
		var iamVar any = nil
		if adminIAM {
			iamVar = "on"
		}
		vars := dig(t, s.resource(t, s.apiFn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
		require.Equal(t, iamVar, vars["HOOKLINE_OPERATOR_IAM"])
	})
}

// routesByKey is the template's API routes' logical IDs by route key.
func (s *synthesized) routesByKey(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for id, r := range dig(t, s.json, "Resources").(obj) {
		if r.(obj)["Type"] == "AWS::ApiGatewayV2::Route" {
			out[dig(t, r, "Properties", "RouteKey").(string)] = id
		}
	}
	return out
}

func strsAny(v any) arr {
	var out arr
	for _, s := range strs(v) {
		out = append(out, s)
	}
	return out
}

// TestStackOperatorIAM is a deployment that restricts the operator routes
// to IAM principals and names its key administrators.
func TestStackOperatorIAM(t *testing.T) {
	admins := []string{"arn:aws:iam::111122223333:role/KeyAdmin", "arn:aws:iam::111122223333:role/cdk-hnb659fds-cfn-exec-role-111122223333-eu-west-1"}
	// 300 + 50 + 12 × 1 requests a second at 100 ms: 36.2 executions.
	s := synth(t, Props{AdminIAMAuth: true, KeyAdmins: admins, APIPublishRateLimit: 300, APIPublishBurstLimit: 60, APIAdminRateLimit: 1, APIAdminBurstLimit: 2, APIReservedConcurrency: 131})
	accessChecks(t, s, accessWant{publishRate: 300, publishBurst: 60, adminRate: 1, adminBurst: 2, adminIAM: true, keyAdmins: admins})
}

func TestAccessPropsValidation(t *testing.T) {
	for name, c := range map[string]struct {
		props Props
		err   string
	}{
		"a key admin that is not an IAM principal's ARN": {Props{KeyAdmins: []string{"KeyAdmin"}}, `key admin "KeyAdmin"`},
		"an assumed role's session":                      {Props{KeyAdmins: []string{"arn:aws:sts::111122223333:assumed-role/Admin/me"}}, "key admin"},
		"an empty key admin":                             {Props{KeyAdmins: []string{""}}, "key admin"},
		"publish rate over the account's default":        {Props{APIPublishRateLimit: 10001}, "API publish rate limit"},
		"negative admin burst":                           {Props{APIAdminBurstLimit: -1}, "API admin burst limit"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.props.withDefaults()
			require.ErrorContains(t, err, c.err)
		})
	}
	p, err := Props{}.withDefaults()
	require.NoError(t, err)
	require.Equal(t, throttle{DefaultAPIPublishRateLimit, DefaultAPIPublishBurstLimit}, throttle{p.APIPublishRateLimit, p.APIPublishBurstLimit})
	require.Equal(t, throttle{DefaultAPIAdminRateLimit, DefaultAPIAdminBurstLimit}, throttle{p.APIAdminRateLimit, p.APIAdminBurstLimit})
	require.False(t, p.AdminIAMAuth)
	require.Nil(t, p.KeyAdmins)
	_, err = Props{KeyAdmins: []string{"arn:aws:iam::111122223333:root", "arn:aws-us-gov:iam::111122223333:user/ops/alice"}}.withDefaults()
	require.NoError(t, err)
}
