// Command replay is the Lambda function on the job queues (tenants' jobs;
// the operator's redrive and erasures, sweeps, gauges and job recovery): it
// runs jobs of every kind (replays, cancels, redrives, erasures) in paced,
// checkpointed steps, and sweeps the dead-letter queue. It runs more than
// replays, but keeps the name "replay", its construct id and its logical
// ids (Functions.Replay, the ReplayJobsStuck alarm, the
// ReplayJobsQueueURL output), so that an upgraded stack keeps the function,
// its queues' mappings and its alarms instead of replacing them. Wiring only: the route table is internal/background's, the
// machinery internal/jobs', replays internal/replay's, the DLQ's jobs
// internal/dlq's, erasure internal/erasure's, the environment it reads
// internal/fnenv's (ReplayEnv).
package main

import (
	"log/slog"
	"math/rand/v2"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/background"
	"github.com/hookline/hookline/internal/boot"
	"github.com/hookline/hookline/internal/erasure"
	"github.com/hookline/hookline/internal/fnenv"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/messagelog"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/notify"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/trace"
)

func main() { boot.Serve("replay", fnenv.LoadReplay, build) }

// build wires the replay function's handler from its environment.
func build(cfg fnenv.ReplayEnv, log *slog.Logger, aws aws.Config) (any, error) {
	db := dynamodb.NewFromConfig(aws)
	st := store.New(db, cfg.StateTable)
	st.Retention = cfg.Retention()
	tracer, err := trace.NewTracer("replay", os.Stdout, cfg.TraceDaemon(), cfg.TraceSampleRate())
	if err != nil {
		return nil, err
	}
	w := &background.Worker{
		Store:            st,
		Metrics:          metrics.New(os.Stdout),
		Queue:            sqs.NewFromConfig(aws),
		DeliveryQueueURL: cfg.DeliveryQueueURL, DLQURL: cfg.DLQURL, ArrivalsURL: cfg.ArrivalsURL, JobsQueueURL: cfg.JobsQueueURL, OpsQueueURL: cfg.OpsQueueURL,
		Config: jobs.Config{Rate: cfg.Rate, DeadWindow: cfg.DeadNoticeWindow},
		Rand:   rand.Float64, Log: log, Tracer: tracer,
	}
	if cfg.OutboxTable != "" {
		ob := &erasure.OutboxTable{DB: db, Table: cfg.OutboxTable, NoIndex: !cfg.MessageLog, Legacy: !cfg.MessageLogSharded}
		if cfg.MessageLog {
			ob.Pages = &messagelog.Pages{DB: db, Table: cfg.StateTable}
			w.MessageLog = &messagelog.Reader{DB: db, Table: cfg.OutboxTable, Legacy: !cfg.MessageLogSharded, Pages: ob.Pages}
		}
		w.OpEvents, w.Outbox = &opevent.Writer{DB: db, Table: cfg.OutboxTable}, ob
	}
	w.PayloadRetention = cfg.PayloadRetention
	if cfg.Mail.From != "" {
		w.Notices = &notify.Notifier{Store: st, Log: log,
			Mailer: &notify.Mailer{SES: &notify.SESClient{Config: aws}, From: cfg.Mail.From, ConfigurationSet: cfg.Mail.ConfigurationSet}}
	}
	return w.Handle, nil
}
