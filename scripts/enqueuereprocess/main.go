// Command enqueuereprocess reprocesses the outbox stream batches that the
// enqueue function's stream mapping parked on the enqueue failure queue: it
// reads each batch back from the stream by shard and sequence numbers,
// invokes the enqueue function with it, and deletes the message once every
// record is processed; an operational event enqueue parked there (the
// operator's EventBridge bus kept refusing it) it puts on the bus again and
// deletes. An operator runs it with their own AWS credentials,
// once the cause of the failures is fixed (docs/operations.md, "EnqueueFailures"):
//
//	make reprocess-enqueue ARGS="-queue-url URL -function NAME [-outbox-table NAME -outbox-fallback]"
//
// or, from a `cdk deploy --outputs-file` file, ARGS="-outputs outputs.json".
// It prints a line per message on stderr and the report, as JSON, on
// stdout; it exits 0 when every message it saw was reprocessed, 1 when some
// are kept (they are visible again for the next run) or it failed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/stackoutputs"
	"github.com/hookline/hookline/internal/streamreprocess"
)

// options are the command's flags.
type options struct {
	// Outputs is a `cdk deploy --outputs-file` file to read the names below
	// from. Default: none.
	Outputs string
	// QueueURL is the enqueue failure queue (stack output
	// EnqueueFailureQueueURL). Required.
	QueueURL string
	// Function is the enqueue function (stack output EnqueueFunctionName).
	// Required.
	Function string
	// OutboxTable is the outbox table (stack output OutboxTableName).
	// Required with OutboxFallback.
	OutboxTable string
	// OutboxFallback reprocesses the batches gone from the stream from the
	// outbox table. Default false.
	OutboxFallback bool
	// OutboxMargin widens each gone batch's window of arrival times by this
	// much on both sides. Default 1h.
	OutboxMargin time.Duration
	// Attempts per invocation before a message is kept. Default 5.
	Attempts int
	// Visibility hides each message received while the run processes it.
	// Default 30m, at most 12h.
	Visibility time.Duration
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("enqueuereprocess", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Outputs, "outputs", "", "read the queue, function and table names from this file, written by cdk deploy --outputs-file")
	fs.StringVar(&o.QueueURL, "queue-url", "", "the enqueue failure queue (stack output EnqueueFailureQueueURL)")
	fs.StringVar(&o.Function, "function", "", "the enqueue function (stack output EnqueueFunctionName)")
	fs.StringVar(&o.OutboxTable, "outbox-table", "", "the outbox table (stack output OutboxTableName), for -outbox-fallback")
	fs.BoolVar(&o.OutboxFallback, "outbox-fallback", false, "reprocess the batches no longer in the stream from the outbox table")
	fs.DurationVar(&o.OutboxMargin, "outbox-margin", time.Hour, "look for a gone batch's events this far before and after its arrival times")
	fs.IntVar(&o.Attempts, "attempts", 5, "invocations of a batch before its message is kept")
	fs.DurationVar(&o.Visibility, "visibility", 30*time.Minute, "hide each message this long while the run processes it (at most 12h)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.Outputs != "" {
		out, err := stackoutputs.Load(o.Outputs)
		if err != nil {
			return o, err
		}
		o.QueueURL = orDefault(o.QueueURL, out.EnqueueFailureQueueURL)
		o.Function = orDefault(o.Function, out.EnqueueFunctionName)
		o.OutboxTable = orDefault(o.OutboxTable, out.OutboxTableName)
	}
	switch {
	case o.QueueURL == "":
		return o, errors.New("-queue-url (or -outputs) is required")
	case o.Function == "":
		return o, errors.New("-function (or -outputs) is required")
	case o.OutboxFallback && o.OutboxTable == "":
		return o, errors.New("-outbox-fallback needs -outbox-table (or -outputs)")
	case o.Attempts < 1:
		return o, errors.New("-attempts must be at least 1")
	case o.Visibility <= 0 || o.Visibility > streamreprocess.MaxVisibility:
		return o, fmt.Errorf("-visibility must be within 1s and %s", streamreprocess.MaxVisibility)
	case o.OutboxMargin < 0:
		return o, errors.New("-outbox-margin must not be negative")
	}
	return o, nil
}

func orDefault(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

func main() {
	code, err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "enqueuereprocess:", err)
	}
	os.Exit(code)
}

func run(args []string, stdout, stderr io.Writer) (int, error) {
	o, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0, nil
	}
	if err != nil {
		return 2, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return 1, err
	}
	r := &streamreprocess.Reprocessor{
		Queue: sqs.NewFromConfig(cfg), QueueURL: o.QueueURL,
		Streams: dynamodbstreams.NewFromConfig(cfg),
		Lambda:  lambda.NewFromConfig(cfg), FunctionName: o.Function,
		Bus:            eventbridge.NewFromConfig(cfg), // parked operational events, to the bus each names
		OutboxFallback: o.OutboxFallback, Outbox: dynamodb.NewFromConfig(cfg), OutboxTable: o.OutboxTable,
		OutboxMargin: o.OutboxMargin, Region: cfg.Region,
		Attempts: o.Attempts, Visibility: o.Visibility,
		Log: slog.New(slog.NewTextHandler(stderr, nil)),
	}
	rep, runErr := r.Run(ctx)
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return 1, err
	}
	fmt.Fprintf(stderr, "enqueuereprocess: %d parked messages reprocessed (or, operational events, put on the bus again) and deleted, %d kept\n", rep.Deleted, rep.Kept)
	gone := 0
	for _, res := range rep.Results {
		if res.Outcome == streamreprocess.Gone {
			gone++
		}
	}
	if gone > 0 && !o.OutboxFallback {
		fmt.Fprintf(stderr, "enqueuereprocess: %d batches are no longer in the stream: run again with -outbox-fallback to reprocess them from the outbox table\n", gone)
	}
	if runErr != nil {
		return 1, runErr
	}
	if rep.Kept > 0 {
		return 1, nil
	}
	return 0, nil
}
