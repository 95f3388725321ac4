package hookline

import (
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2authorizers"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/api"
)

// Who may reach the api function, and how fast: one Lambda permission for
// the whole HTTP API, IAM authorization on the operator routes when asked,
// and a throttle per class of route.

// publishRouteKey is the producers' route, throttled apart from the rest.
const publishRouteKey = "POST /v1/events"

// throttle is an API Gateway route throttle: requests per second, and the
// most taken at once above that rate.
type throttle struct {
	Rate  float64
	Burst int
}

// routesIntegration is the Lambda proxy integration (payload 2.0) of every
// route, the catch-all $default included. CDK's HttpLambdaIntegration adds
// a Lambda permission to its function for each route it is bound to (35
// of them, about 15 KB of the function's 20 KB resource policy), so it is
// given a view of fn that adds none; allowInvokeFromAPI adds the one
// permission that covers every route.
func routesIntegration(c constructs.Construct, fn awslambda.Function) awsapigatewayv2.HttpRouteIntegration {
	view := awslambda.Function_FromFunctionAttributes(c, jsii.String("RoutesTarget"), &awslambda.FunctionAttributes{
		FunctionArn:     fn.FunctionArn(),
		SameEnvironment: jsii.Bool(false),
		SkipPermissions: jsii.Bool(true),
	})
	return awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String("Lambda"), view,
		&awsapigatewayv2integrations.HttpLambdaIntegrationProps{PayloadFormatVersion: awsapigatewayv2.PayloadFormatVersion_VERSION_2_0()})
}

// allowInvokeFromAPI adds fn's one Lambda permission for httpAPI: API
// Gateway may invoke it from any stage, method and route of that API (and
// no other).
func allowInvokeFromAPI(fn awslambda.Function, httpAPI awsapigatewayv2.HttpApi) {
	fn.AddPermission(jsii.String("InvokeFromHttpApi"), &awslambda.Permission{
		Principal: awsiam.NewServicePrincipal(jsii.String("apigateway.amazonaws.com"), nil),
		SourceArn: awscdk.Stack_Of(httpAPI).FormatArn(&awscdk.ArnComponents{
			Service:      jsii.String("execute-api"),
			Resource:     httpAPI.ApiId(),
			ResourceName: jsii.String("*/*"),
		}),
	})
}

// routeKeys are the API's routes as API Gateway route keys ("GET
// /v1/endpoints"): api.Routes() and the console's pages (the console's
// directory, /console/, comes by $default), with whether each is an
// operator route.
func routeKeys() (keys []string, operator map[string]bool) {
	operator = map[string]bool{}
	for _, rt := range api.Routes() {
		key := rt.Method + " " + rt.Path
		keys = append(keys, key)
		operator[key] = rt.Operator
	}
	return append(keys, api.ConsoleRoutes()...), operator
}

// addRoutes adds a route per routeKeys entry, each to integration, and
// returns them by route key; with adminIAM, the operator routes
// (/v1/admin/...) take AWS_IAM authorization: API Gateway refuses a request
// to them that is not signed (SigV4) by a principal allowed
// execute-api:Invoke on it.
func addRoutes(httpAPI awsapigatewayv2.HttpApi, integration awsapigatewayv2.HttpRouteIntegration, adminIAM bool) map[string]awsapigatewayv2.HttpRoute {
	keys, operator := routeKeys()
	routes := make(map[string]awsapigatewayv2.HttpRoute, len(keys))
	var iam awsapigatewayv2.IHttpRouteAuthorizer
	if adminIAM {
		iam = awsapigatewayv2authorizers.NewHttpIamAuthorizer()
	}
	for _, key := range keys {
		method, path, _ := strings.Cut(key, " ")
		opts := &awsapigatewayv2.AddRoutesOptions{
			Path:        jsii.String(path),
			Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod(method)},
			Integration: integration,
		}
		if operator[key] && iam != nil {
			opts.Authorizer = iam
		}
		routes[key] = (*httpAPI.AddRoutes(opts))[0]
	}
	return routes
}

// setRouteThrottles sets the stage's RouteSettings: the producers' publish
// route and each operator route throttled on their own, apart from the
// stage's default route throttle, which every other route and anonymous
// traffic share. API Gateway keeps one bucket per route key, so a flood
// on one route does not drain another's. (A flood aimed at the publish
// route itself still drains it: HTTP APIs have no per-caller throttle.)
// CloudFormation refuses route settings for a route that does not exist
// yet, so the stage waits for those routes.
func setRouteThrottles(stage awsapigatewayv2.CfnStage, routes map[string]awsapigatewayv2.HttpRoute, publish, admin throttle) {
	settings := routeThrottles(publish, admin)
	for key := range settings {
		route, ok := routes[key]
		if !ok {
			panic("route settings for a route the API does not have: " + key)
		}
		stage.Node().AddDependency(route)
	}
	stage.SetRouteSettings(settings)
}

// routeThrottles are the stage's RouteSettings by route key. The property
// is untyped JSON in CDK (unlike DefaultRouteSettings), so CDK passes it
// as it is: CloudFormation's own names (ThrottlingRateLimit, not the
// struct's throttlingRateLimit).
func routeThrottles(publish, admin throttle) map[string]any {
	setting := func(t throttle) map[string]any {
		return map[string]any{"ThrottlingRateLimit": t.Rate, "ThrottlingBurstLimit": t.Burst}
	}
	out := map[string]any{publishRouteKey: setting(publish)}
	keys, operator := routeKeys()
	for _, key := range keys {
		if operator[key] {
			out[key] = setting(admin)
		}
	}
	return out
}
