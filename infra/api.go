package main

import (
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/sealing"
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
	// SecretsKey seals new signing secrets: the API may encrypt with it,
	// never decrypt.
	SecretsKey awskms.IKey
}

// HTTPAPI is the tenant and operator API.
type HTTPAPI struct {
	API      awsapigatewayv2.HttpApi
	Function awslambda.Function
	// OperatorKey holds the operator key, generated at deploy time.
	OperatorKey awssecretsmanager.Secret
}

// NewHTTPAPI creates the HTTP API (payload 2.0) with one route per entry of
// api.Routes(), all served by one function, and the operator key as a
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
		sealing.EnvKeyARN:                  *p.SecretsKey.KeyArn(),
	})
	p.ReplayJobs.Grant(fn, jsii.String("sqs:SendMessage"))
	// Reads (GetItem, BatchGetItem for an event's deliveries, Query for
	// endpoints), writes (PutItem, UpdateItem, DeleteItem for an endpoint),
	// and Query on the index (DLQ listing, key revocation, DLQ depths).
	grantTableItems(fn, p.Functions.StateTable, "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query",
		"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem")
	grantIndexQuery(fn, p.Functions.StateTable)
	awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: fn, Actions: jsii.Strings("secretsmanager:GetSecretValue"), ResourceArns: jsii.Strings(*secret.SecretArn()),
	})
	grantSecrets(fn, p.SecretsKey, "kms:Encrypt")

	httpAPI := awsapigatewayv2.NewHttpApi(c, jsii.String("Http"), &awsapigatewayv2.HttpApiProps{
		Description: jsii.String("hookline tenant and operator API"),
	})
	integration := awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String("Lambda"), fn,
		&awsapigatewayv2integrations.HttpLambdaIntegrationProps{PayloadFormatVersion: awsapigatewayv2.PayloadFormatVersion_VERSION_2_0()})
	for _, rt := range api.Routes() {
		httpAPI.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
			Path:        jsii.String(rt.Path),
			Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod(rt.Method)},
			Integration: integration,
		})
	}
	return HTTPAPI{API: httpAPI, Function: fn, OperatorKey: secret}
}
