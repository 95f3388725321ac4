// Command api is the Lambda function behind the HTTP API (API Gateway,
// payload 2.0). Wiring only: the handlers are plain net/http handlers in
// internal/api, adapted by internal/apigw.
package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strconv"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/apigw"
	"github.com/hookline/hookline/internal/boot"
	"github.com/hookline/hookline/internal/netguard"
	"github.com/hookline/hookline/internal/replay"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/store"
)

// Config of the api function, read from the environment once.
type Config struct {
	// StateTable (HOOKLINE_STATE_TABLE) holds tenants, keys and endpoints. Required.
	StateTable string
	// OperatorKey (HOOKLINE_OPERATOR_KEY) reaches the admin routes; or
	// OperatorKeySecretARN (HOOKLINE_OPERATOR_KEY_SECRET_ARN) names the
	// Secrets Manager secret holding it, read by the first admin request
	// (not at start: a cold start makes no network call) and read again
	// when it is a minute old (api.DefaultOperatorKeyTTL), so a rotation
	// takes effect within a minute. One is required; OperatorKey wins.
	OperatorKey          string
	OperatorKeySecretARN string
	// URLs (HOOKLINE_ALLOW_HTTP=true, HOOKLINE_ALLOW_CIDRS) is the
	// registration check of endpoint URLs. Default: https, public hosts only.
	URLs netguard.URLPolicy
	// SecretsKeyARN (HOOKLINE_SECRETS_KEY_ARN) is the KMS key new signing
	// secrets are sealed with before they are stored (the function may
	// encrypt with it, never decrypt). Required.
	SecretsKeyARN string
	// ReplayQueueURL (HOOKLINE_REPLAY_QUEUE_URL) receives tenants' replay
	// jobs. Empty: the replay routes answer 503.
	ReplayQueueURL string
	// ReplayOpsQueueURL (HOOKLINE_REPLAY_OPS_QUEUE_URL) receives the
	// operator's redrive, away from tenants' jobs. Empty: ReplayQueueURL.
	ReplayOpsQueueURL string
	// LogLevel (HOOKLINE_LOG_LEVEL): DEBUG, INFO (default), WARN or ERROR.
	LogLevel string
}

func loadConfig(getenv func(string) string) (Config, error) {
	c := Config{
		StateTable:           getenv("HOOKLINE_STATE_TABLE"),
		OperatorKey:          getenv("HOOKLINE_OPERATOR_KEY"),
		OperatorKeySecretARN: getenv("HOOKLINE_OPERATOR_KEY_SECRET_ARN"),
		SecretsKeyARN:        getenv(sealing.EnvKeyARN),
		ReplayQueueURL:       getenv("HOOKLINE_REPLAY_QUEUE_URL"),
		ReplayOpsQueueURL:    getenv("HOOKLINE_REPLAY_OPS_QUEUE_URL"),
		LogLevel:             getenv("HOOKLINE_LOG_LEVEL"),
	}
	if c.StateTable == "" {
		return c, fmt.Errorf("HOOKLINE_STATE_TABLE is required")
	}
	if c.SecretsKeyARN == "" {
		return c, fmt.Errorf("%s is required", sealing.EnvKeyARN)
	}
	if c.OperatorKey == "" && c.OperatorKeySecretARN == "" {
		return c, fmt.Errorf("HOOKLINE_OPERATOR_KEY or HOOKLINE_OPERATOR_KEY_SECRET_ARN is required")
	}
	if s := getenv("HOOKLINE_ALLOW_HTTP"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return c, fmt.Errorf("HOOKLINE_ALLOW_HTTP: %q is not true or false", s)
		}
		c.URLs.AllowHTTP = b
	}
	allow, err := netguard.ParsePrefixes(getenv("HOOKLINE_ALLOW_CIDRS"))
	if err != nil {
		return c, fmt.Errorf("HOOKLINE_ALLOW_CIDRS: %w", err)
	}
	c.URLs.Guard.Allow = allow
	return c, nil
}

func main() { boot.Main("api", run) }

func run() error {
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		return err
	}
	log, awsCfg, err := boot.Start(context.Background(), cfg.LogLevel)
	if err != nil {
		return err
	}
	st := store.New(dynamodb.NewFromConfig(awsCfg), cfg.StateTable)
	srv := &api.Server{
		Store:       api.Store{Tenants: st, Endpoints: st, EndpointChanges: st, Deliveries: st, DeadLetters: st, Jobs: st},
		Sealer:      &sealing.Sealer{KMS: kms.NewFromConfig(awsCfg), KeyID: cfg.SecretsKeyARN},
		OperatorKey: cfg.OperatorKey,
		URLs:        cfg.URLs,
		Rand:        rand.Reader,
		Log:         log,
	}
	if cfg.OperatorKey == "" {
		srv.OperatorKeyFunc = secretString(secretsmanager.NewFromConfig(awsCfg), cfg.OperatorKeySecretARN)
	}
	if cfg.ReplayQueueURL != "" {
		srv.Replays = &replay.Worker{Store: replay.Store{Jobs: st, JobSlots: st}, Queue: sqs.NewFromConfig(awsCfg), JobsQueueURL: cfg.ReplayQueueURL, OpsQueueURL: cfg.ReplayOpsQueueURL, Log: log}
	}
	lambda.Start(apigw.Handler(srv.Handler()))
	return nil
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
