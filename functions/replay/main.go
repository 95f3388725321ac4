// Command replay is the Lambda function on the replay queues (tenants' jobs;
// the operator's redrive, sweeps, gauges and job recovery): it runs replays
// and redrives in paced, checkpointed steps, and sweeps the dead-letter
// queue. Wiring only; the logic is in internal/replay.
package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/boot"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/replay"
	"github.com/hookline/hookline/internal/store"
)

// Config of the replay function, read from the environment once.
type Config struct {
	// StateTable (HOOKLINE_STATE_TABLE), DeliveryQueueURL
	// (HOOKLINE_DELIVERY_QUEUE_URL), DLQURL (HOOKLINE_DLQ_URL) and
	// JobsQueueURL (HOOKLINE_REPLAY_QUEUE_URL) are required.
	StateTable, DeliveryQueueURL, DLQURL, JobsQueueURL string
	// OpsQueueURL (HOOKLINE_REPLAY_OPS_QUEUE_URL) carries the redrive and
	// the sweeps, gauges and job recoveries. Empty: JobsQueueURL.
	OpsQueueURL string
	// Rate (HOOKLINE_REPLAY_RATE) is the sends per second of one job. Default 10.
	Rate float64
	// LogLevel (HOOKLINE_LOG_LEVEL): DEBUG, INFO (default), WARN or ERROR.
	LogLevel string
}

func loadConfig(getenv func(string) string) (Config, error) {
	c := Config{
		StateTable: getenv("HOOKLINE_STATE_TABLE"), DeliveryQueueURL: getenv("HOOKLINE_DELIVERY_QUEUE_URL"),
		DLQURL: getenv("HOOKLINE_DLQ_URL"), JobsQueueURL: getenv("HOOKLINE_REPLAY_QUEUE_URL"), OpsQueueURL: getenv("HOOKLINE_REPLAY_OPS_QUEUE_URL"),
		Rate: 10, LogLevel: getenv("HOOKLINE_LOG_LEVEL"),
	}
	for _, v := range []struct{ name, value string }{
		{"HOOKLINE_STATE_TABLE", c.StateTable}, {"HOOKLINE_DELIVERY_QUEUE_URL", c.DeliveryQueueURL},
		{"HOOKLINE_DLQ_URL", c.DLQURL}, {"HOOKLINE_REPLAY_QUEUE_URL", c.JobsQueueURL},
	} {
		if v.value == "" {
			return c, fmt.Errorf("%s is required", v.name)
		}
	}
	if s := getenv("HOOKLINE_REPLAY_RATE"); s != "" {
		r, err := strconv.ParseFloat(s, 64)
		if err != nil || r <= 0 || r > 1000 {
			return c, fmt.Errorf("HOOKLINE_REPLAY_RATE: %q is not a rate from 0 to 1000 per second", s)
		}
		c.Rate = r
	}
	return c, nil
}

func main() { boot.Main("replay", run) }

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
	w := &replay.Worker{
		Store:            replay.Store{Jobs: st, JobSlots: st, Sweeps: st, DeadLetters: st, Claims: st, Deliveries: st},
		Depths:           st,
		Reconciler:       st,
		Metrics:          metrics.New(os.Stdout),
		Queue:            sqs.NewFromConfig(aws),
		DeliveryQueueURL: cfg.DeliveryQueueURL, DLQURL: cfg.DLQURL, JobsQueueURL: cfg.JobsQueueURL, OpsQueueURL: cfg.OpsQueueURL,
		Rate: cfg.Rate, Rand: rand.Float64, Log: log,
	}
	lambda.Start(w.Handle)
	return nil
}
