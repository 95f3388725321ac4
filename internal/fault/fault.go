// Package fault injects failures into the functions, for the soak test only.
// It wraps the ports a handler already has: CrashAfterSend wraps deliver's
// sender, FailAfterSend enqueue's queue. A function's main builds a wrapper
// only when its environment sets HOOKLINE_FAULTS (the CDK context value
// "faults"), which no production deployment does; the handlers themselves
// know nothing of faults.
package fault

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/sender"
)

// ErrInjected is returned by a point that fails.
var ErrInjected = errors.New("injected fault")

// Points a deployment can fail at.
const (
	// DeliverCrash: the deliver process exits after an attempt's POST and
	// before recording it or answering for its batch (CrashAfterSend).
	DeliverCrash = "deliver_crash"
	// EnqueueFail: enqueue fails its invocation after sending part of its
	// messages: after its first SendMessageBatch request, before the next
	// (FailAfterSend).
	EnqueueFail = "enqueue_fail"
)

// Env is the environment variable holding the rates: "point:rate,...".
const Env = "HOOKLINE_FAULTS"

// Rates maps a point to the probability that it fails.
type Rates map[string]float64

// Parse reads "deliver_crash:0.02,enqueue_fail:0.05" ("" is no faults).
func Parse(s string) (Rates, error) {
	r := Rates{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, v, ok := strings.Cut(part, ":")
		rate, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || rate < 0 || rate > 1 {
			return nil, fmt.Errorf("%s: %q is not point:rate with a rate from 0 to 1", Env, part)
		}
		if name != DeliverCrash && name != EnqueueFail {
			return nil, fmt.Errorf("%s: unknown fault point %q", Env, name)
		}
		r[name] = rate
	}
	return r, nil
}

// String renders r as Parse reads it, points in name order.
func (r Rates) String() string {
	parts := make([]string, 0, len(r))
	for name, rate := range r {
		parts = append(parts, name+":"+strconv.FormatFloat(rate, 'f', -1, 64))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// draw answers true with probability rate; rnd draws in [0, 1) (nil:
// math/rand/v2).
func draw(rate float64, rnd func() float64) bool {
	if rate <= 0 {
		return false
	}
	if rnd == nil {
		rnd = rand.Float64
	}
	return rnd() < rate
}

// Sender is deliver's port for one attempt (deliver.Sender).
type Sender interface {
	Send(ctx context.Context, r sender.Request) sender.Result
}

// CrashAfterSend is the deliver_crash point: a Sender that, after each
// attempt's POST, ends the process with probability Rate, as a crash
// would: before the attempt is recorded or its batch answered.
type CrashAfterSend struct {
	// Next makes the attempt. Required.
	Next Sender
	// Rate is the probability of a crash after an attempt.
	Rate float64
	// Rand draws in [0, 1). Default math/rand/v2.
	Rand func() float64
	// Exit ends the process. Default os.Exit.
	Exit func(code int)
}

// Send makes the attempt with Next, then may end the process.
func (c *CrashAfterSend) Send(ctx context.Context, r sender.Request) sender.Result {
	res := c.Next.Send(ctx, r)
	if draw(c.Rate, c.Rand) {
		fmt.Fprintln(os.Stderr, `{"level":"WARN","msg":"injected fault: process exits","point":"`+DeliverCrash+`"}`)
		exit := c.Exit
		if exit == nil {
			exit = os.Exit
		}
		exit(3)
	}
	return res
}

// BatchSender is enqueue's port to the delivery queue (enqueue.Sender).
type BatchSender interface {
	SendMessageBatch(context.Context, *sqs.SendMessageBatchInput, ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
}

// FailAfterSend is the enqueue_fail point: a BatchSender that Draw arms,
// with probability Rate, once per invocation; armed, it fails the first
// request that is sent, after sending it, and disarms. The invocation then
// fails after sending part of its messages, before its next request.
type FailAfterSend struct {
	// Next sends the requests. Required.
	Next BatchSender
	// Rate is the probability that an invocation fails.
	Rate float64
	// Rand draws in [0, 1). Default math/rand/v2.
	Rand  func() float64
	armed atomic.Bool
}

// Draw arms f with probability Rate: call it as an invocation starts.
func (f *FailAfterSend) Draw() { f.armed.Store(draw(f.Rate, f.Rand)) }

// SendMessageBatch sends with Next; armed, it then answers ErrInjected.
func (f *FailAfterSend) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	out, err := f.Next.SendMessageBatch(ctx, in, opts...)
	if err != nil || !f.armed.CompareAndSwap(true, false) {
		return out, err
	}
	return nil, fmt.Errorf("%w at %s", ErrInjected, EnqueueFail)
}

// EachInvocation returns handle with f drawn as each invocation starts: the
// enqueue function's Lambda handler when enqueue_fail is set.
func EachInvocation[E, R any](f *FailAfterSend, handle func(context.Context, E) (R, error)) func(context.Context, E) (R, error) {
	return func(ctx context.Context, ev E) (R, error) {
		f.Draw()
		return handle(ctx, ev)
	}
}
