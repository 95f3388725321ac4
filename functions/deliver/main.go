// Command deliver is the Lambda function on the delivery queue: it POSTs each
// delivery, signed, and retries, dead-letters or completes it by the outcome.
// Wiring only; the logic is in internal/deliver and internal/sender.
package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/boot"
	"github.com/hookline/hookline/internal/deliver"
	"github.com/hookline/hookline/internal/fault"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/netguard"
	"github.com/hookline/hookline/internal/retry"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/sender"
	"github.com/hookline/hookline/internal/store"
)

// Config of the deliver function, read from the environment once.
type Config struct {
	// StateTable (HOOKLINE_STATE_TABLE) holds endpoints and deliveries. Required.
	StateTable string
	// QueueURL (HOOKLINE_DELIVERY_QUEUE_URL) is the queue this function consumes. Required.
	QueueURL string
	// DLQURL (HOOKLINE_DLQ_URL) receives permanent failures. Required.
	DLQURL string
	// SecretsKeyARN (HOOKLINE_SECRETS_KEY_ARN) is the KMS key the endpoints'
	// signing secrets are sealed with; only ciphertexts of this key are
	// opened. Required.
	SecretsKeyARN string
	// Retry is the retry policy (HOOKLINE_RETRY_*, HOOKLINE_MAX_AGE; see
	// package retry). Default: the documented schedule. Its
	// VisibilityTimeout (HOOKLINE_QUEUE_VISIBILITY_TIMEOUT, default 2 min)
	// must be the delivery queue's: the longest retry delay, 12 h less it
	// less a minute, is what SQS accepts from a message received that long
	// ago. The stack sets it.
	Retry retry.Policy
	// RequestTimeout (HOOKLINE_REQUEST_TIMEOUT) bounds one attempt. Default 15s.
	RequestTimeout time.Duration
	// Guard (HOOKLINE_ALLOW_CIDRS, comma-separated CIDRs) lets deliveries
	// reach otherwise refused addresses. Default: none.
	Guard netguard.Guard
	// DisableAfter (HOOKLINE_DISABLE_AFTER) consecutive failed attempts
	// disable an endpoint. Default 50; negative: never.
	DisableAfter int
	// Faults (HOOKLINE_FAULTS) injects failures, for the soak test only.
	// Default: none.
	Faults fault.Rates
	// LogLevel (HOOKLINE_LOG_LEVEL): DEBUG, INFO (default), WARN or ERROR.
	LogLevel string
}

func loadConfig(getenv func(string) string) (Config, error) {
	faults, err := fault.Parse(getenv(fault.Env))
	if err != nil {
		return Config{}, err
	}
	c := Config{
		StateTable:     getenv("HOOKLINE_STATE_TABLE"),
		QueueURL:       getenv("HOOKLINE_DELIVERY_QUEUE_URL"),
		DLQURL:         getenv("HOOKLINE_DLQ_URL"),
		SecretsKeyARN:  getenv(sealing.EnvKeyARN),
		RequestTimeout: 15 * time.Second,
		DisableAfter:   50,
		Faults:         faults,
		LogLevel:       getenv("HOOKLINE_LOG_LEVEL"),
	}
	for name, v := range map[string]string{"HOOKLINE_STATE_TABLE": c.StateTable, "HOOKLINE_DELIVERY_QUEUE_URL": c.QueueURL, "HOOKLINE_DLQ_URL": c.DLQURL, sealing.EnvKeyARN: c.SecretsKeyARN} {
		if v == "" {
			return c, fmt.Errorf("%s is required", name)
		}
	}
	if c.Retry, err = retry.FromEnv(getenv); err != nil {
		return c, err
	}
	if s := getenv("HOOKLINE_REQUEST_TIMEOUT"); s != "" {
		if c.RequestTimeout, err = time.ParseDuration(s); err != nil || c.RequestTimeout <= 0 {
			return c, fmt.Errorf("HOOKLINE_REQUEST_TIMEOUT: %q is not a positive duration", s)
		}
	}
	if s := getenv("HOOKLINE_DISABLE_AFTER"); s != "" {
		if c.DisableAfter, err = strconv.Atoi(s); err != nil || c.DisableAfter == 0 {
			return c, fmt.Errorf("HOOKLINE_DISABLE_AFTER: %q is not a non-zero whole number", s)
		}
	}
	if c.Guard.Allow, err = netguard.ParsePrefixes(getenv("HOOKLINE_ALLOW_CIDRS")); err != nil {
		return c, fmt.Errorf("HOOKLINE_ALLOW_CIDRS: %w", err)
	}
	return c, nil
}

func main() { boot.Main("deliver", run) }

func run() error {
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		return err
	}
	log, aws, err := boot.Start(context.Background(), cfg.LogLevel)
	if err != nil {
		return err
	}
	st := store.New(dynamodb.NewFromConfig(aws), cfg.StateTable)
	h := &deliver.Handler{
		Store: deliver.Store{Snapshots: st, Attempts: st, EndpointHealth: st},
		Queue: sqs.NewFromConfig(aws),
		Sender: &sender.Client{HTTP: sender.NewHTTPClient(sender.ClientOptions{
			Guard: &cfg.Guard, RequestTimeout: cfg.RequestTimeout,
		})},
		// Built once: what it opens is kept across warm invocations.
		Secrets:      &sealing.Opener{KMS: kms.NewFromConfig(aws), KeyID: cfg.SecretsKeyARN},
		QueueURL:     cfg.QueueURL,
		DLQURL:       cfg.DLQURL,
		Policy:       cfg.Retry,
		DisableAfter: cfg.DisableAfter,
		Rand:         rand.Float64,
		Log:          log,
		Fault:        cfg.Faults.Point,
		Metrics:      metrics.New(os.Stdout),
	}
	lambda.Start(h.Handle)
	return nil
}
