// Command enqueue is the Lambda function on the outbox table's stream: it
// fans each new outbox event out to the tenant's endpoints as messages on the
// delivery queue. Wiring only; the logic is in internal/enqueue.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/boot"
	"github.com/hookline/hookline/internal/enqueue"
	"github.com/hookline/hookline/internal/fault"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/store"
)

// Config of the enqueue function, read from the environment once.
type Config struct {
	// StateTable (HOOKLINE_STATE_TABLE) holds endpoints and deliveries. Required.
	StateTable string
	// QueueURL (HOOKLINE_DELIVERY_QUEUE_URL) receives delivery messages. Required.
	QueueURL string
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
		StateTable: getenv("HOOKLINE_STATE_TABLE"),
		QueueURL:   getenv("HOOKLINE_DELIVERY_QUEUE_URL"),
		Faults:     faults,
		LogLevel:   getenv("HOOKLINE_LOG_LEVEL"),
	}
	if c.StateTable == "" {
		return c, fmt.Errorf("HOOKLINE_STATE_TABLE is required")
	}
	if c.QueueURL == "" {
		return c, fmt.Errorf("HOOKLINE_DELIVERY_QUEUE_URL is required")
	}
	return c, nil
}

func main() { boot.Main("enqueue", run) }

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
	h := &enqueue.Handler{
		Store:    enqueue.Store{Subscribers: st, Existing: st, Rejections: st},
		Queue:    sqs.NewFromConfig(aws),
		QueueURL: cfg.QueueURL,
		Log:      log,
		Fault:    cfg.Faults.Point,
		Metrics:  metrics.New(os.Stdout),
	}
	lambda.Start(h.Handle)
	return nil
}
