// Command api is the Lambda function behind the HTTP API (API Gateway,
// payload 2.0). Wiring only: the handlers are plain net/http handlers in
// internal/api, adapted by internal/apigw; the environment it reads is
// internal/fnenv's APIEnv.
package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/apigw"
	"github.com/hookline/hookline/internal/boot"
	"github.com/hookline/hookline/internal/eventtypes"
	"github.com/hookline/hookline/internal/fnenv"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/messagelog"
	"github.com/hookline/hookline/internal/notify"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/trace"
)

func main() { boot.Serve("api", fnenv.LoadAPI, build) }

// build wires the api function's handler from its environment.
func build(cfg fnenv.APIEnv, log *slog.Logger, awsCfg aws.Config) (any, error) {
	st := store.New(dynamodb.NewFromConfig(awsCfg), cfg.StateTable)
	st.Retention = cfg.Retention()
	tracer, err := trace.NewTracer("api", os.Stdout, cfg.TraceDaemon(), cfg.TraceSampleRate())
	if err != nil {
		return nil, err
	}
	srv := &api.Server{
		Store:       st,
		Sealer:      &sealing.Sealer{KMS: kms.NewFromConfig(awsCfg), KeyID: cfg.SecretsKeyARN},
		OperatorKey: cfg.OperatorKey,
		URLs:        cfg.URLs,
		// Static egress's addresses, for GET /v1/egress-ips (none: AWS's shared ranges).
		EgressIPs: cfg.EgressIPs,
		// The same fields, in the same order (fnenv.Destinations).
		Destinations: api.DestinationRules(cfg.Destinations),
		// Endpoints' own retry schedules and timeouts are held to these.
		Retry:             cfg.Endpoints.Retry,
		MaxRequestTimeout: cfg.Endpoints.MaxRequestTimeout,
		// The tenant caps (docs/configuration.md).
		Caps:   api.Caps{MaxEndpoints: cfg.Endpoints.MaxEndpoints, MaxEndpointBytes: cfg.Endpoints.MaxEndpointBytes, MaxMetricsEventTypes: cfg.Endpoints.MaxMetricsEventTypes},
		Rand:   rand.Reader,
		Log:    log,
		Tracer: tracer,

		PayloadRetention: cfg.PayloadRetention,
		FrameAncestors:   cfg.ConsoleFrameAncestors,
		PortalMinTTL:     cfg.PortalMinTTL,

		TenantExpensiveRate: cfg.TenantExpensiveRate,
		ExpensiveBudget:     cfg.ExpensiveBudget,
	}
	if err := eventRoutes(srv, cfg, awsCfg); err != nil {
		return nil, err
	}
	if cfg.DeliveryQueueURL != "" {
		srv.DeliveryQueue, srv.DeliveryQueueURL = sqs.NewFromConfig(awsCfg), cfg.DeliveryQueueURL
	}
	if cfg.OperatorKey == "" {
		srv.OperatorKeyFunc = secretString(secretsmanager.NewFromConfig(awsCfg), cfg.OperatorKeySecretARN)
	}
	if cfg.OperatorIAM {
		srv.OperatorCaller = iamCaller
	}
	if cfg.AlarmNamePrefix != "" {
		srv.Alarms, srv.AlarmNamePrefix = cloudwatch.NewFromConfig(awsCfg), cfg.AlarmNamePrefix
	}
	if cfg.Mail.From != "" {
		srv.Notify, srv.Notices = st, mailer(cfg.Mail, awsCfg)
	}
	if cfg.ReplayQueueURL != "" {
		srv.Jobs = &jobs.Starter{Store: st, Queue: sqs.NewFromConfig(awsCfg), JobsQueueURL: cfg.ReplayQueueURL, OpsQueueURL: cfg.ReplayOpsQueueURL}
	}
	return apigw.Handler(srv.Handler()), nil
}

// eventRoutes gives srv what the stack set of the event routes: the message
// log, the outbox (publish, test events) and the event-type catalog
// bundled beside the bootstrap (none: nil).
func eventRoutes(srv *api.Server, cfg fnenv.APIEnv, awsCfg aws.Config) error {
	if cfg.OutboxTable != "" && cfg.MessageLog {
		db := dynamodb.NewFromConfig(awsCfg)
		srv.MessageLog = &messagelog.Reader{DB: db, Table: cfg.OutboxTable, Legacy: !cfg.MessageLogSharded,
			Pages: &messagelog.Pages{DB: db, Table: cfg.StateTable}}
	}
	if cfg.OutboxTable != "" {
		srv.Outbox, srv.OutboxTable = dynamodb.NewFromConfig(awsCfg), cfg.OutboxTable
	}
	catalog, err := eventtypes.Open(cfg.EventTypes)
	srv.EventTypes = catalog
	return err
}

// mailer sends the verification e-mails of notification addresses from
// m's sender.
func mailer(m fnenv.Mail, awsCfg aws.Config) *notify.Mailer {
	return &notify.Mailer{SES: &notify.SESClient{Config: awsCfg}, From: m.From, ConfigurationSet: m.ConfigurationSet}
}

// iamCaller is api.Server's OperatorCaller when API Gateway authorizes the
// operator routes by IAM: the caller's ARN from the identity API Gateway
// verified (the payload 2.0 request context's authorizer.iam), which must
// belong to the API's own account. A request without one (a route that is
// not IAM-authorized) is not the operator's.
func iamCaller(r *http.Request) (string, bool) {
	rc, ok := apigw.EventContext(r.Context())
	if !ok || rc.Authorizer == nil || rc.Authorizer.IAM == nil {
		return "", false
	}
	id := rc.Authorizer.IAM
	if id.UserARN == "" || id.AccountID == "" || id.AccountID != rc.AccountID {
		return "", false
	}
	return id.UserARN, true
}

// secretReader is what the api function needs of Secrets Manager.
type secretReader interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

var _ secretReader = (*secretsmanager.Client)(nil)

// secretString returns a function that reads the string value of the secret
// arn: api.Server's OperatorKeyFunc. Its errors name the secret, never its
// value; a secret without a string value is an error.
func secretString(sm secretReader, arn string) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
		if err != nil {
			return "", fmt.Errorf("read the secret %s: %w", arn, err)
		}
		if aws.ToString(out.SecretString) == "" {
			return "", fmt.Errorf("the secret %s has no string value", arn)
		}
		return *out.SecretString, nil
	}
}
