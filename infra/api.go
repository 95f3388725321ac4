package main

import (
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/api"
)

// HTTPAPIProps configures NewHTTPAPI.
type HTTPAPIProps struct {
	Functions functionDefaults
	// AllowHTTP lets tenants register plain http endpoint URLs.
	AllowHTTP bool
	// AllowCIDRs are the SSRF guard's allowlist, for registration checks.
	AllowCIDRs []string
	// ReplayJobs receives the replay jobs the API starts.
	ReplayJobs awssqs.IQueue
}

// HTTPAPI is the tenant and operator API.
type HTTPAPI struct {
	API      awsapigatewayv2.HttpApi
	Function awslambda.Function
	// OperatorKey holds the operator key, generated at deploy time.
	OperatorKey awssecretsmanager.Secret
}

// NewHTTPAPI creates the HTTP API (payload 2.0) with one route per entry of
// api.Routes() and the catch-all $default route, all served by one
// function, and the operator key as a
// generated Secrets Manager secret only that function can read.
func NewHTTPAPI(scope constructs.Construct, id string, p HTTPAPIProps) HTTPAPI {
	c := constructs.NewConstruct(scope, &id)
	secret := awssecretsmanager.NewSecret(c, jsii.String("OperatorKey"), &awssecretsmanager.SecretProps{
		Description: jsii.String("hookline operator key: reaches the /v1/admin routes"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			PasswordLength:     jsii.Number(48),
			ExcludePunctuation: jsii.Bool(true),
		},
	})
	fn := p.Functions.new(c, "Api", 15*time.Second, map[string]string{
		"HOOKLINE_OPERATOR_KEY_SECRET_ARN": *secret.SecretArn(),
		"HOOKLINE_ALLOW_HTTP":              strconv.FormatBool(p.AllowHTTP),
		"HOOKLINE_ALLOW_CIDRS":             strings.Join(p.AllowCIDRs, ","),
		"HOOKLINE_REPLAY_QUEUE_URL":        *p.ReplayJobs.QueueUrl(),
	})
	p.ReplayJobs.GrantSendMessages(fn)
	p.Functions.StateTable.GrantReadWriteData(fn)
	secret.GrantRead(fn, nil)

	integration := awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String("Lambda"), fn,
		&awsapigatewayv2integrations.HttpLambdaIntegrationProps{PayloadFormatVersion: awsapigatewayv2.PayloadFormatVersion_VERSION_2_0()})
	httpAPI := awsapigatewayv2.NewHttpApi(c, jsii.String("Http"), &awsapigatewayv2.HttpApiProps{
		Description: jsii.String("hookline tenant and operator API"),
		// The catch-all route ($default) sends what no route matches to the
		// function too: it answers a wrong method 405 with Allow and an
		// unknown or unclean path 404, as problem documents, where API
		// Gateway itself would answer 404 {"message":"Not Found"} to both.
		DefaultIntegration: integration,
	})
	for _, rt := range api.Routes() {
		httpAPI.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
			Path:        jsii.String(rt.Path),
			Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod(rt.Method)},
			Integration: integration,
		})
	}
	return HTTPAPI{API: httpAPI, Function: fn, OperatorKey: secret}
}
