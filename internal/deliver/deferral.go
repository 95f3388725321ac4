package deliver

import (
	"cmp"
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/metrics"
)

// deferMessage sends the attempt's message again, delayed, for w, carrying
// the attempts made before this receive (which made none), and reports
// the original done (deleted): the new message's receive count starts
// again, so waiting burns neither an attempt nor a receive. A wait for
// the endpoint (rate limit, breaker, gate) counts one more deferral; a
// dependency's hitch one more hitch, its delay doubling with each (the
// bound on how often: every 5 s at first, every 15 min at most, until
// the age cap); a hop keeps the due time. A message that cannot be sent
// again is left, to come back after the queue's visibility timeout.
func (h *Handler) deferMessage(ctx context.Context, at *attempt, w Wait) bool {
	msg := at.in.Message
	msg.Attempts = at.in.Attempt - 1
	delay := at.deferDelay
	switch w {
	case WaitDependency:
		delay = h.hitchDelay(msg.Hitches)
		msg.Hitches++
	case WaitBackoff:
		delay = msg.NotBefore.Sub(h.cfg.Now())
	default:
		msg.Deferrals++
	}
	return h.sendAgain(ctx, at, msg, delay, w)
}

// sendAgain queues msg to be sent to the delivery queue at the batch's
// end, delayed by delay (whole seconds, 1 to MaxDeferDelay), in its
// tenant's wait group (message.WaitGroupID: a fair queue then never
// counts a tenant's waits against its fresh messages), and reports true: the batch's deferrals go out
// together (laterSends), ten to a request, and one that SQS does not take
// comes back after the visibility timeout (or, for a long backoff, its
// hidden delay) instead. Without a batch (a test calling one attempt),
// it is sent at once.
func (h *Handler) sendAgain(ctx context.Context, at *attempt, msg message.Message, delay time.Duration, w Wait) bool {
	return h.sendAgainOr(ctx, at, msg, delay, w, 0)
}

// sendAgainOr is sendAgain with the delay to hide the received message
// for should the send fail (0: the queue's visibility timeout).
func (h *Handler) sendAgainOr(ctx context.Context, at *attempt, msg message.Message, delay time.Duration, w Wait, fallback time.Duration) bool {
	delay = wholeSeconds(delay)
	body, err := message.Encode(msg)
	if err != nil {
		at.log.ErrorContext(ctx, "cannot encode the message to send it again; it comes back after the visibility timeout", "wait", string(w), "error", err.Error())
		return false
	}
	at.later.add(laterSend{at: at, queueURL: h.sendQueue(at.m, w), body: string(body), tenantID: msg.TenantID, traceParent: msg.TraceParent, delay: delay, wait: w, fallback: fallback})
	return true
}

// receivedFrom is the URL of the queue m was received from: the tenant
// lane's (Config.LaneQueueURL) when its source is the lane, else the
// delivery queue's. A record names its queue by ARN and the config by
// URL; both end in the queue's name.
func (h *Handler) receivedFrom(m events.SQSMessage) string {
	if h.fromLane(m) {
		return h.cfg.LaneQueueURL
	}
	return h.cfg.QueueURL
}

// fromLane reports whether m came from the tenant lane.
func (h *Handler) fromLane(m events.SQSMessage) bool {
	if h.cfg.LaneQueueURL == "" || m.EventSourceARN == "" {
		return false
	}
	name := h.cfg.LaneQueueURL[strings.LastIndexByte(h.cfg.LaneQueueURL, '/')+1:]
	return m.EventSourceARN[strings.LastIndexByte(m.EventSourceARN, ':')+1:] == name
}

// sendQueue is the queue a message waiting for w goes to: the tenant lane
// for one received from it (once out of the delivery queue, a message
// stays out until it is delivered or dead) and for one whose tenant has
// its share of the pool (WaitTenantBusy: the tenant is over its share, and
// its waits would otherwise cycle through the queue every other tenant's
// deliveries come through); else the delivery queue. Without a lane, the
// delivery queue.
func (h *Handler) sendQueue(m events.SQSMessage, w Wait) string {
	if h.cfg.LaneQueueURL != "" && (w == WaitTenantBusy || h.fromLane(m)) {
		return h.cfg.LaneQueueURL
	}
	return h.cfg.QueueURL
}

// laterSend is a message to send again at the batch's end.
type laterSend struct {
	at *attempt
	// queueURL is where it goes: sendQueue's answer.
	queueURL string
	body     string
	tenantID string
	// traceParent is the body's trace context, mirrored in the message
	// attribute (message.TraceAttributes).
	traceParent string
	delay       time.Duration
	wait        Wait
	// fallback, for a retry's first hop, is the delay to hide the
	// received message for should the send fail; such a send logs no
	// line and puts no Deferred metric of its own (the retry's line and
	// RetryScheduled stand for it).
	fallback time.Duration
}

// laterSends are a batch's messages to send again.
type laterSends struct {
	mu    sync.Mutex
	sends []laterSend
}

func (l *laterSends) add(s laterSend) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sends = append(l.sends, s)
}

// sendLater sends the batch's deferred messages, ten (and 256 KiB) to a
// SendMessageBatch request per queue, and returns the SQS message ids of
// those not sent, which come back (a long backoff's, hidden for its
// delay).
func (h *Handler) sendLater(ctx context.Context, l *laterSends) []string {
	var failed []string
	type forming struct {
		chunk   []laterSend
		entries []sqstypes.SendMessageBatchRequestEntry
	}
	var order []string
	byQueue := map[string]*forming{}
	flush := func(url string) {
		f := byQueue[url]
		if len(f.entries) == 0 {
			return
		}
		failed = append(failed, h.sendChunk(ctx, url, f.chunk, f.entries)...)
		f.chunk, f.entries = nil, nil
	}
	for i, s := range l.sends {
		e := sqstypes.SendMessageBatchRequestEntry{
			Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(s.body),
			DelaySeconds: int32(s.delay / time.Second), MessageGroupId: message.WaitGroupID(s.tenantID),
			MessageAttributes: message.TraceAttributes(s.traceParent),
		}
		url := cmp.Or(s.queueURL, h.cfg.QueueURL)
		f := byQueue[url]
		if f == nil {
			f = &forming{}
			byQueue[url] = f
			order = append(order, url)
		}
		if !message.Fits(f.entries, e) {
			flush(url)
		}
		f.chunk, f.entries = append(f.chunk, s), append(f.entries, e)
	}
	for _, url := range order {
		flush(url)
	}
	return failed
}

// sendChunk sends one request's entries and returns the message ids of
// those SQS did not take.
func (h *Handler) sendChunk(ctx context.Context, queueURL string, chunk []laterSend, entries []sqstypes.SendMessageBatchRequestEntry) []string {
	out, err := h.Queue.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &queueURL, Entries: entries})
	refused := map[string]string{}
	if err != nil {
		for _, e := range entries {
			refused[aws.ToString(e.Id)] = err.Error()
		}
	} else {
		for _, f := range out.Failed {
			refused[aws.ToString(f.Id)] = aws.ToString(f.Code) + ": " + aws.ToString(f.Message)
		}
	}
	var failed []string
	for i, s := range chunk {
		at := s.at
		if why, ok := refused[aws.ToString(entries[i].Id)]; ok {
			at.log.ErrorContext(ctx, "cannot send the message again to wait; it comes back", "wait", string(s.wait), "error", why)
			if s.fallback > 0 {
				h.setVisibility(ctx, at.log, at.m, s.fallback)
			}
			failed = append(failed, at.m.MessageId)
			continue
		}
		if s.queueURL != h.receivedFrom(at.m) {
			at.mb.Put(metrics.Laned, 1, nil)
		}
		if s.fallback == 0 {
			// A retry's first hop (fallback set) is counted and logged
			// already: RetryScheduled and "retry scheduled", with its delay.
			at.mb.Put(metrics.Deferred, 1, map[string]string{metrics.DimensionReason: string(s.wait)})
			at.log.InfoContext(ctx, "message sent again, delayed", "wait", string(s.wait), "delay_s", int(s.delay.Seconds()))
		}
	}
	return failed
}
