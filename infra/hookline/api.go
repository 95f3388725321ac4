package hookline

import (
	"encoding/json"
	"net/netip"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/fnenv"
	"github.com/hookline/hookline/internal/netguard"
)

// apiTimeout is the api function's timeout.
const apiTimeout = 15 * time.Second

// apiProps configures newAPI.
type apiProps struct {
	Functions functionDefaults
	// AllowHTTP lets tenants register plain http endpoint URLs.
	AllowHTTP bool
	// AllowCIDRs are the SSRF guard's allowlist, for registration checks;
	// DenyCIDRs its denylist (static egress's VPC), which wins.
	AllowCIDRs, DenyCIDRs []netip.Prefix
	// EgressIPs are static egress's addresses, for GET /v1/egress-ips
	// (staticEgress.ipList); nil without it.
	EgressIPs []string
	// Mail sends notification addresses their verification e-mail
	// (Props.NotifyFrom); zero: none.
	Mail fnenv.Mail
	// EventTypes is the event-type catalog's file beside the bootstrap
	// (fnenv.APIEnv.EventTypes); "": no catalog.
	EventTypes string
	// Jobs receives the tenants' jobs the API starts (replays, cancels);
	// Ops the operator's (the redrive, erasures).
	Jobs, Ops awssqs.IQueue
	// RateLimit and BurstLimit throttle the stage (every route): requests
	// per second, and the most taken at once above it. Required.
	RateLimit  float64
	BurstLimit int
	// PublishThrottle throttles POST /v1/events (the producers) and
	// AdminThrottle each operator route, apart from RateLimit and
	// BurstLimit. Required.
	PublishThrottle, AdminThrottle throttle
	// AdminIAM puts AWS_IAM authorization on the operator routes, in place
	// of the operator key (Props.AdminIAMAuth).
	AdminIAM bool
	// ReservedConcurrency, when positive, reserves and caps the function's
	// concurrency.
	ReservedConcurrency int
	// SecretsKey seals new signing secrets: the API may encrypt with it,
	// never decrypt.
	SecretsKey awskms.IKey
	// Outbox receives the events published through the API and the test
	// events (PutItem; GetItem to answer a repeated publish). Nil: those
	// routes, and the message log's, answer 503.
	Outbox awsdynamodb.ITable
	// MessageLog reads the message log from Outbox: Query on its by_tenant
	// index and GetItem of an event. False: the message log is off (the
	// index does not exist), and the message log routes answer 503.
	MessageLog bool
	// LegacyIndex says Outbox keeps the unsharded index by_tenant, which
	// the log is read from (tableSet.LegacyIndex).
	LegacyIndex bool
	// DeliveryQueue receives the resends of delivered deliveries (rebuilt
	// from the outbox): granted SendMessage only with the message log on.
	DeliveryQueue awssqs.IQueue
	// PayloadRetention is how long an event's payload is served. Required
	// (Props.PayloadRetention, 15 days by default).
	PayloadRetention time.Duration
	// ConsoleFrameAncestors may frame the console (Props's).
	// Nil: 'none'.
	ConsoleFrameAncestors []string
	// PortalMinTTL is the shortest life of a portal link. Required
	// (Props.PortalMinTTL, 60 s by default).
	PortalMinTTL time.Duration
	// TenantExpensiveRate and ExpensiveBudget are the per-tenant bounds
	// of the expensive routes (Props.APITenantExpensiveRate and
	// APIExpensiveBudget, 5 a second and 2 s by default).
	TenantExpensiveRate int
	ExpensiveBudget     time.Duration
	// AlarmNamePrefix starts the names of the instance's alarms
	// (alarmNamePrefix), which the function may describe. Required.
	AlarmNamePrefix string
	// Destinations are the AWS destinations registration accepts.
	Destinations fnenv.Destinations
	// Endpoints holds endpoints' own retry schedules and timeouts to the
	// stack's retry policy (the deliver function's, which set the queue's
	// maxReceiveCount) and Props.MaxRequestTimeout.
	Endpoints fnenv.EndpointLimits
}

// apiParts is the tenant and operator API.
type apiParts struct {
	API      awsapigatewayv2.HttpApi
	Function awslambda.Function
	// AccessLogs holds the stage's access log, one JSON line per request.
	AccessLogs awslogs.LogGroup
	// OperatorKey holds the operator key, generated at deploy time.
	OperatorKey awssecretsmanager.Secret
}

// accessLogFormat is the HTTP API's access log line: JSON, one per request,
// from API Gateway's $context variables. It names the route by its template
// (routeKey), not the path, and holds no header: neither the Authorization
// header (an API key, the operator key, a portal link's token) nor anything
// a path might carry can reach the log. A portal link carries its token in
// the URL's fragment, which browsers never send.
var accessLogFormat = mustJSON(map[string]string{
	"requestId":          "$context.requestId",
	"ip":                 "$context.identity.sourceIp",
	"userAgent":          "$context.identity.userAgent",
	"requestTime":        "$context.requestTime",
	"httpMethod":         "$context.httpMethod",
	"routeKey":           "$context.routeKey",
	"status":             "$context.status",
	"protocol":           "$context.protocol",
	"responseLength":     "$context.responseLength",
	"responseLatency":    "$context.responseLatency",
	"integrationStatus":  "$context.integrationStatus",
	"integrationLatency": "$context.integrationLatency",
	"integrationError":   "$context.integrationErrorMessage",
	"error":              "$context.error.message",
})

// outboxTableName is the outbox table's name, "" without one.
func outboxTableName(t awsdynamodb.ITable) string {
	if t == nil {
		return ""
	}
	return *t.TableName()
}

// grantAPIOutbox lets the api function write events into the outbox (and
// read one back), read the message log when it is on, and send the resends
// of delivered deliveries, which need the log.
func grantAPIOutbox(fn awslambda.Function, p apiProps) {
	if p.Outbox != nil {
		grantOutbox(fn, p.Outbox, p.MessageLog, p.LegacyIndex)
	}
	if resendQueueURL(p) != "" {
		p.DeliveryQueue.Grant(fn, jsii.String("sqs:SendMessage"))
	}
}

// resendQueueURL is the delivery queue's URL for the api function's resends
// of delivered deliveries, "" when the message log is off (they need it).
func resendQueueURL(p apiProps) string {
	if p.Outbox == nil || !p.MessageLog || p.DeliveryQueue == nil {
		return ""
	}
	return *p.DeliveryQueue.QueueUrl()
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// newAPI creates the HTTP API (payload 2.0) with one route per entry of
// api.Routes() and the catch-all $default route, all served by one
// function through one Lambda permission, and the operator key as a
// generated Secrets Manager secret only that function can read (with
// AdminIAM, the operator routes take IAM authorization instead). Its stage
// is throttled (RateLimit, BurstLimit; the publish and operator routes
// apart) and writes a JSON access log.
func newAPI(scope constructs.Construct, id string, p apiProps) apiParts {
	c := constructs.NewConstruct(scope, &id)
	secret := awssecretsmanager.NewSecret(c, jsii.String("OperatorKey"), &awssecretsmanager.SecretProps{
		Description: jsii.String("hookline operator key: reaches the /v1/admin routes"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			PasswordLength:     jsii.Number(48),
			ExcludePunctuation: jsii.Bool(true),
		},
	})
	fn := p.Functions.new(c, "Api", apiTimeout, fnenv.APIEnv{
		Common:               p.Functions.common(),
		OperatorKeySecretARN: *secret.SecretArn(),
		URLs:                 netguard.URLPolicy{AllowHTTP: p.AllowHTTP, Guard: netguard.Guard{Allow: p.AllowCIDRs, Deny: p.DenyCIDRs}},
		EgressIPs:            p.EgressIPs,
		Mail:                 p.Mail,
		EventTypes:           p.EventTypes,
		ReplayQueueURL:       *p.Jobs.QueueUrl(),
		ReplayOpsQueueURL:    *p.Ops.QueueUrl(),
		SecretsKeyARN:        *p.SecretsKey.KeyArn(),
		OutboxTable:          outboxTableName(p.Outbox),
		MessageLog:           p.Outbox != nil && p.MessageLog,
		MessageLogSharded:    !p.LegacyIndex,
		DeliveryQueueURL:     resendQueueURL(p),
		PayloadRetention:     p.PayloadRetention,

		ConsoleFrameAncestors: p.ConsoleFrameAncestors,
		PortalMinTTL:          p.PortalMinTTL,
		TenantExpensiveRate:   p.TenantExpensiveRate,
		ExpensiveBudget:       p.ExpensiveBudget,
		AlarmNamePrefix:       p.AlarmNamePrefix,
		OperatorIAM:           p.AdminIAM,
		Destinations:          p.Destinations,
		Endpoints:             p.Endpoints,
	}.Vars())
	grantAPI(c, fn, secret, p)

	integration := routesIntegration(c, fn)
	httpAPI := awsapigatewayv2.NewHttpApi(c, jsii.String("Http"), &awsapigatewayv2.HttpApiProps{
		// An HTTP API must have a name, which CDK would make its id
		// ("Http"): one unique in the app, so that two instances' APIs
		// can be told apart in the console.
		ApiName:     awscdk.Names_UniqueResourceName(c, &awscdk.UniqueResourceNameOptions{MaxLength: jsii.Number(128)}),
		Description: jsii.String("hookline tenant and operator API"),
		// The catch-all route ($default) sends what no route matches to the
		// function too: it answers a wrong method 405 with Allow and an
		// unknown or unclean path 404, as problem documents, where API
		// Gateway itself would answer 404 {"message":"Not Found"} to both.
		DefaultIntegration: integration,
	})
	allowInvokeFromAPI(fn, httpAPI)
	routes := addRoutes(httpAPI, integration, p.AdminIAM)

	accessLogs := configureStage(c, httpAPI, routes, p)
	return apiParts{API: httpAPI, Function: fn, OperatorKey: secret, AccessLogs: accessLogs}
}

// grantAPI grants the api function what it calls, and reserves its
// concurrency.
func grantAPI(c constructs.Construct, fn awslambda.Function, secret awssecretsmanager.Secret, p apiProps) {
	grantAPIOutbox(fn, p)
	reserveConcurrency(fn, p.ReservedConcurrency)
	p.Jobs.Grant(fn, jsii.String("sqs:SendMessage"))
	p.Ops.Grant(fn, jsii.String("sqs:SendMessage"))
	// Reads (GetItem, BatchGetItem for an event's deliveries, Query for
	// endpoints), writes (PutItem, UpdateItem, DeleteItem for an endpoint;
	// UpdateItem for a tenant's expensive-request window), ConditionCheckItem
	// (a new API key's transaction checks the tenant's tombstone), and Query
	// on the index (DLQ listing, key revocation, DLQ depths).
	grantTableItems(fn, p.Functions.StateTable, "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query",
		"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem")
	grantIndexQuery(fn, p.Functions.StateTable)
	awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: fn, Actions: jsii.Strings("secretsmanager:GetSecretValue"), ResourceArns: jsii.Strings(*secret.SecretArn()),
	})
	grantSecrets(fn, p.SecretsKey, "kms:Encrypt")
	grantAlarmsRead(c, fn, p.AlarmNamePrefix)
}

// alarmNamePrefix starts the name of every alarm of the hookline instance
// c: "<stack name>.<instance>.", where <instance> is logicalIDPrefix(c),
// or "Default" for an instance with that id alone (the project's app).
// nameAlarms names every alarm of the instance with it. The separator is
// one that stack names cannot hold (letters, digits and hyphens), so no
// other stack's alarm can start with the prefix: CloudFormation's own
// names ("<stack name>-<logical id>-<suffix>") under a prefix of
// "<stack name>-" were matched by a sibling stack's, "Hookline-" by
// "Hookline-Staging-...". The one separator after <instance> keeps an
// instance "Hooks" from matching a sibling instance "Hooks2".
// GET /v1/admin/alarms lists those in ALARM; the alarm topic takes
// publishes from those alone.
func alarmNamePrefix(c constructs.Construct) string {
	return *awscdk.Fn_Join(jsii.String(""), &[]*string{awscdk.Aws_STACK_NAME(), jsii.String(alarmNameSeparator + alarmInstanceName(c) + alarmNameSeparator)})
}

// alarmNameSeparator separates the parts of an alarm's name: a character
// CloudFormation's stack names cannot contain.
const alarmNameSeparator = "."

// alarmInstanceName is the instance's part of its alarms' names:
// logicalIDPrefix(c), or "Default" when that is empty.
func alarmInstanceName(c constructs.Construct) string {
	if p := logicalIDPrefix(c); p != "" {
		return p
	}
	return "Default"
}

// nameAlarms names every CloudWatch alarm under c: prefix
// (alarmNamePrefix(c)), then the ids of the alarm's path below c, each
// with its non-alphanumeric characters removed, joined by
// alarmNameSeparator ("Hookline.Default.Operations.OldestDeliveryAge").
// Naming an alarm that CloudFormation named before replaces it: an
// upgraded stack's alarms start again in INSUFFICIENT_DATA, with a new
// history.
func nameAlarms(c constructs.Construct, prefix string) {
	base := *c.Node().Path()
	for _, n := range *c.Node().FindAll(constructs.ConstructOrder_PREORDER) {
		alarm, ok := n.(awscloudwatch.CfnAlarm)
		if !ok {
			continue
		}
		// The L1 alarm's path ends with "Resource", the L2's own child.
		rel := strings.TrimSuffix(strings.TrimPrefix(*n.Node().Path(), base+"/"), "/Resource")
		var parts []string
		for _, id := range strings.Split(rel, "/") {
			if id = alphanumeric(id); id != "" {
				parts = append(parts, id)
			}
		}
		alarm.SetAlarmName(awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String(prefix), jsii.String(strings.Join(parts, alarmNameSeparator))}))
	}
}

// alphanumeric is id without its characters other than ASCII letters and
// digits.
func alphanumeric(id string) string {
	var b strings.Builder
	for _, r := range id {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// logicalIDPrefix is the start CDK gives the logical ID of every resource
// under c: the ids of c's path below its stack, "Default" left out, each
// with its non-alphanumeric characters removed.
func logicalIDPrefix(c constructs.Construct) string {
	stackPath := *awscdk.Stack_Of(c).Node().Path()
	rel := strings.TrimPrefix(strings.TrimPrefix(*c.Node().Path(), stackPath), "/")
	var b strings.Builder
	for _, id := range strings.Split(rel, "/") {
		if id == "Default" {
			continue
		}
		b.WriteString(alphanumeric(id))
	}
	return b.String()
}

// grantAlarmsRead lets the api function describe the instance's alarms,
// and no other: DescribeAlarms takes the alarms' ARNs as its resource.
func grantAlarmsRead(c constructs.Construct, fn awslambda.Function, prefix string) {
	awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: fn, Actions: jsii.Strings("cloudwatch:DescribeAlarms"),
		ResourceArns: jsii.Strings(*awscdk.Stack_Of(c).FormatArn(&awscdk.ArnComponents{
			Service: jsii.String("cloudwatch"), Resource: jsii.String("alarm"),
			ResourceName: jsii.String(prefix + "*"), ArnFormat: awscdk.ArnFormat_COLON_RESOURCE_NAME,
		})),
	})
}

// configureStage sets the throttling (p.RateLimit, p.BurstLimit by
// default; the publish and operator routes' own, setRouteThrottles) and the
// JSON access log of the API's default stage, and returns the log's group.
func configureStage(c constructs.Construct, httpAPI awsapigatewayv2.HttpApi, routes map[string]awsapigatewayv2.HttpRoute, p apiProps) awslogs.LogGroup {
	// The default stage ($default) is the one CDK creates with the API: its
	// throttling and access log are set on it, not on a new stage, so an
	// upgraded stack keeps its stage (a new one with the same name would
	// fail to create while the old one exists).
	accessLogs := awslogs.NewLogGroup(c, jsii.String("AccessLogs"), &awslogs.LogGroupProps{
		Retention:     logRetention,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	stage := httpAPI.DefaultStage().Node().DefaultChild().(awsapigatewayv2.CfnStage)
	stage.SetDefaultRouteSettings(&awsapigatewayv2.CfnStage_RouteSettingsProperty{
		ThrottlingRateLimit:  jsii.Number(p.RateLimit),
		ThrottlingBurstLimit: jsii.Number(float64(p.BurstLimit)),
	})
	setRouteThrottles(stage, routes, p.PublishThrottle, p.AdminThrottle)
	stage.SetAccessLogSettings(&awsapigatewayv2.CfnStage_AccessLogSettingsProperty{
		// The log group's ARN without the ":*" that LogGroupArn carries.
		DestinationArn: awscdk.Stack_Of(c).FormatArn(&awscdk.ArnComponents{
			Service:      jsii.String("logs"),
			Resource:     jsii.String("log-group"),
			ResourceName: accessLogs.LogGroupName(),
			ArnFormat:    awscdk.ArnFormat_COLON_RESOURCE_NAME,
		}),
		Format: jsii.String(accessLogFormat),
	})
	return accessLogs
}
