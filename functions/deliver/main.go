// Command deliver is the Lambda function on the delivery queue: it POSTs each
// delivery, signed, and retries, dead-letters or completes it by the outcome.
// Wiring only; the logic is in internal/deliver, internal/sender (HTTP) and
// internal/destination (SQS, SNS, EventBridge), the
// environment it reads in internal/fnenv (DeliverEnv).
package main

import (
	"log/slog"
	"math/rand/v2"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/boot"
	"github.com/hookline/hookline/internal/deliver"
	"github.com/hookline/hookline/internal/destination"
	"github.com/hookline/hookline/internal/fault"
	"github.com/hookline/hookline/internal/fnenv"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/sender"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/trace"
)

func main() { boot.Serve("deliver", fnenv.LoadDeliver, build) }

// build wires the deliver function's handler from its environment.
func build(cfg fnenv.DeliverEnv, log *slog.Logger, aws aws.Config) (any, error) {
	// An http endpoint's attempt is a POST; an sqs, sns or eventbridge
	// endpoint's (sender.Request.Destination set) goes through AWS, with
	// the customer's role assumed, its credentials kept per warm instance.
	awsSender, err := destination.New(aws, destination.Options{
		RequestTimeout: cfg.RequestTimeout, NoProbe: cfg.NoRoleProbe, OwnResources: cfg.OwnResources,
	})
	if err != nil {
		return nil, err
	}
	var send deliver.Sender = destination.Router{
		HTTP: &sender.Client{HTTP: sender.NewHTTPClient(sender.ClientOptions{
			Guard: &cfg.Guard, RequestTimeout: cfg.RequestTimeout,
		})},
		AWS: awsSender,
	}
	if rate := cfg.Faults[fault.DeliverCrash]; rate > 0 {
		// The soak only: the process may exit after a POST.
		send = &fault.CrashAfterSend{Next: send, Rate: rate}
	}
	tracer, err := trace.NewTracer("deliver", os.Stdout, cfg.TraceDaemon(), cfg.TraceSampleRate())
	if err != nil {
		return nil, err
	}
	db := dynamodb.NewFromConfig(aws)
	st := store.New(db, cfg.StateTable)
	st.Retention = cfg.Retention()
	h := &deliver.Handler{
		Store:  st,
		Queue:  sqs.NewFromConfig(aws),
		Sender: send,
		// Built once: what it opens is kept across warm invocations.
		Secrets: &sealing.Opener{KMS: kms.NewFromConfig(aws), KeyID: cfg.SecretsKeyARN},
		Config:  config(cfg),
		Log:     log,
		Metrics: metrics.New(os.Stdout),
		Tracer:  tracer,
	}
	if cfg.Notices.OutboxTable != "" {
		h.OpEvents = &opevent.Writer{DB: db, Table: cfg.Notices.OutboxTable}
	}
	// The endpoints' counters an instance keeps between writes
	// (StatsFlushEvery) are written when Lambda shuts it down.
	return boot.Shutdown{Handler: h.Handle, OnShutdown: h.FlushStats}, nil
}

// config is the handler's Config from the environment; a zero (unset)
// field takes the handler's default (deliver.Config.WithDefaults).
func config(cfg fnenv.DeliverEnv) deliver.Config {
	return deliver.Config{
		QueueURL:     cfg.QueueURL,
		LaneQueueURL: cfg.LaneQueueURL,
		DLQURL:       cfg.DLQURL,
		OpsQueueURL:  cfg.Notices.OpsQueueURL,
		Policy:       cfg.Retry,
		DisableAfter: cfg.DisableAfter,
		FailingAfter: cfg.FailingAfter,
		// Isolation: the breaker, the patient disable, the endpoint
		// gates and the tenant's share.
		DisableAfterFor:     cfg.DisableAfterFor,
		Breaker:             cfg.Breaker,
		EndpointConcurrency: cfg.EndpointConcurrency,
		FastConcurrency:     cfg.FastConcurrency,
		TenantConcurrency:   cfg.TenantConcurrency,
		DeadWindow:          cfg.Notices.DeadNoticeWindow,
		RequestTimeout:      cfg.RequestTimeout,
		StatsFlushEvery:     cfg.StatsFlushEvery,
		Rand:                rand.Float64,
	}
}
