package enqueue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/outbox"
)

// Bus puts events on the operator's EventBridge bus.
type Bus interface {
	PutEvents(context.Context, *eventbridge.PutEventsInput, ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

var _ Bus = (*eventbridge.Client)(nil)

// EventSource is the Source of every event hookline puts on the operator's
// bus; an operator's rule matches it ({"source": ["hookline"]}).
const EventSource = "hookline"

// PutEvents' limits (AWS refuses a request past either; the local cloud
// checks the first only).
const (
	// MaxPutEntries is the most entries of one PutEvents request.
	MaxPutEntries = 10
	// MaxPutBytes is the most bytes of one PutEvents request, counted as
	// PutEntrySize counts them.
	MaxPutBytes = 256 << 10
)

// OperatorDetail is the detail of an event on the operator's bus
// (domain.OperatorDetail: the notices read it too).
type OperatorDetail = domain.OperatorDetail

// forwards reports whether ev goes to the operator's bus: whether it is one
// of hookline's operational events. ev has passed decodeImage's validation;
// that validation (issue 15's emitter work) refuses an item of a reserved
// type that lacks the hookline_origin marker, so only events hookline wrote
// itself reach the operator. This is the one place that decides.
func forwards(ev outbox.Event) bool { return domain.IsOperational(ev.Type) }

// forward is an operational event to put on the bus, and its stream record.
type forward struct {
	seq, eventID string
	entry        ebtypes.PutEventsRequestEntry
}

// forward adds ev, of the stream record seq, to the invocation's events for
// the operator's bus, once per event id.
func (inv *invocation) forward(bus, seq string, ev outbox.Event) error {
	if inv.forwarded[ev.ID] {
		return nil
	}
	e, err := operatorEntry(bus, ev)
	if err != nil {
		return err
	}
	inv.forwarded[ev.ID] = true
	inv.forwards = append(inv.forwards, forward{seq: seq, eventID: ev.ID, entry: e})
	return nil
}

// operatorEntry is ev as a PutEvents entry on bus. Its size is bounded: a
// payload of at most outbox.MaxPayloadBytes (192 KiB), compacted, with ids
// and a type of at most outbox.MaxIDBytes each, is well under MaxPutBytes,
// so every entry fits a request of its own.
func operatorEntry(bus string, ev outbox.Event) (ebtypes.PutEventsRequestEntry, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "<" stays one byte, as the producer wrote it
	err := enc.Encode(OperatorDetail{ID: ev.ID, TenantID: ev.TenantID, Type: ev.Type, OccurredAt: ev.OccurredAt.UTC(), Data: ev.Payload})
	if err != nil {
		return ebtypes.PutEventsRequestEntry{}, fmt.Errorf("encode operator event %s: %w", ev.ID, err)
	}
	return ebtypes.PutEventsRequestEntry{
		EventBusName: aws.String(bus),
		Source:       aws.String(EventSource),
		DetailType:   aws.String(ev.Type),
		Detail:       aws.String(string(bytes.TrimRight(b.Bytes(), "\n"))),
		Time:         aws.Time(ev.OccurredAt),
	}, nil
}

// PutEntrySize is an entry's size as EventBridge counts it against
// MaxPutBytes: 14 bytes for a Time, and the UTF-8 bytes of Source,
// DetailType, Detail and each resource.
func PutEntrySize(e ebtypes.PutEventsRequestEntry) int {
	n := len(aws.ToString(e.Source)) + len(aws.ToString(e.DetailType)) + len(aws.ToString(e.Detail))
	if e.Time != nil {
		n += 14
	}
	for _, r := range e.Resources {
		n += len(r)
	}
	return n
}

// CheckPut says what EventBridge answers to a PutEvents request holding
// entries, where it refuses it whole: no entries, more than MaxPutEntries,
// more than MaxPutBytes. Fakes of EventBridge call it.
func CheckPut(entries []ebtypes.PutEventsRequestEntry) error {
	if len(entries) == 0 || len(entries) > MaxPutEntries {
		return fmt.Errorf("ValidationException: %d entries, want 1 to %d", len(entries), MaxPutEntries)
	}
	size := 0
	for _, e := range entries {
		size += PutEntrySize(e)
	}
	if size > MaxPutBytes {
		return fmt.Errorf("ValidationException: request of %d bytes, at most %d", size, MaxPutBytes)
	}
	return nil
}

// forwardAll puts the operational events of the invocation on the
// operator's bus, in stream order, in as few PutEvents requests as the
// limits allow. The events a request or an entry failed for (throttled,
// an internal failure, the bus gone or denied) are put again, alone, after
// a short pause, up to PutTries in all; those that still fail are parked
// on the enqueue failure queue (park), counted, and the invocation goes on
// with the deliveries: the operator's bus is optional, and its trouble
// never holds up a delivery. Only when they cannot be parked either (or
// no ParkQueueURL is set) does the invocation fail with the records
// concerned, so that the stream retries the batch: the retry puts every
// operational event of the batch again, those already put included (at
// least once; the detail's id deduplicates).
func (h *Handler) forwardAll(ctx context.Context, inv *invocation) *failure {
	pending := inv.forwards
	for try := 1; len(pending) > 0; try++ {
		if try > 1 {
			if err := h.cfg.Sleep(ctx, h.cfg.PutBackoff<<(try-2)); err != nil {
				return &failure{pending[0].seq, pending[len(pending)-1].seq, err}
			}
		}
		var why error
		pending, why = h.putAll(ctx, pending)
		if len(pending) > 0 && try >= h.cfg.PutTries {
			return h.park(ctx, inv, pending, why)
		}
	}
	return nil
}

// putAll puts fws in as few requests as the limits allow and returns those
// not accepted, in order, with the first error seen.
func (h *Handler) putAll(ctx context.Context, fws []forward) ([]forward, error) {
	var failed []forward
	var first error
	for len(fws) > 0 {
		n, size := 0, 0
		for n < len(fws) && n < MaxPutEntries && size+PutEntrySize(fws[n].entry) <= MaxPutBytes {
			size += PutEntrySize(fws[n].entry)
			n++
		}
		f, err := h.put(ctx, fws[:n])
		failed = append(failed, f...)
		if first == nil {
			first = err
		}
		fws = fws[n:]
	}
	return failed, first
}

// ParkedKind is the hookline_parked value of a ParkedEvent: it tells a
// parked operational event from Lambda's stream failure records on the
// enqueue failure queue.
const ParkedKind = "operator_event"

// ParkedEvent is the body of a message enqueue parks on the enqueue failure
// queue when it could not put an operational event on the operator's bus:
// the entry it would have put, whole, and why it could not. make
// reprocess-enqueue puts it on the bus again (internal/streamreprocess).
type ParkedEvent struct {
	// Parked is ParkedKind.
	Parked string `json:"hookline_parked"`
	// Bus, DetailType and Time are the entry's; Detail is its detail (an
	// OperatorDetail) byte for byte.
	Bus        string          `json:"bus"`
	DetailType string          `json:"detail_type"`
	Time       time.Time       `json:"time"`
	Detail     json.RawMessage `json:"detail"`
	// Error is why the last put failed.
	Error string `json:"error"`
}

// maxParkedErrorBytes bounds a ParkedEvent's Error.
const maxParkedErrorBytes = 1 << 10

// Entry is the PutEvents entry the parked event is: the one enqueue tried.
func (p ParkedEvent) Entry() ebtypes.PutEventsRequestEntry {
	return ebtypes.PutEventsRequestEntry{
		EventBusName: aws.String(p.Bus), Source: aws.String(EventSource), DetailType: aws.String(p.DetailType),
		Detail: aws.String(string(p.Detail)), Time: aws.Time(p.Time),
	}
}

// ParseParked reads a message body of the enqueue failure queue: ok is
// false for anything but a ParkedEvent (Lambda's failure records, say).
func ParseParked(body string) (p ParkedEvent, ok bool, err error) {
	var probe struct {
		Parked string `json:"hookline_parked"`
	}
	if json.Unmarshal([]byte(body), &probe) != nil || probe.Parked == "" {
		return p, false, nil
	}
	if probe.Parked != ParkedKind {
		return p, true, fmt.Errorf("a parked message of unknown kind %q", probe.Parked)
	}
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		return p, true, fmt.Errorf("parked operational event: %w", err)
	}
	if p.Bus == "" || p.DetailType == "" || !strings.HasPrefix(string(p.Detail), "{") {
		return p, true, errors.New("parked operational event: bus, detail_type or detail missing")
	}
	return p, true, nil
}

// parkedBody encodes fw as a ParkedEvent, the detail kept byte for byte
// ("<" stays one byte, as the producer wrote it). Its size is bounded:
// the entry fits a PutEvents request (operatorEntry), the error is cut at
// maxParkedErrorBytes, so it is far under SQS's 256 KiB message limit.
func parkedBody(fw forward, why error) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	e := fw.entry
	err := enc.Encode(ParkedEvent{
		Parked: ParkedKind, Bus: aws.ToString(e.EventBusName), DetailType: aws.ToString(e.DetailType), Time: aws.ToTime(e.Time).UTC(),
		Detail: json.RawMessage(aws.ToString(e.Detail)), Error: outbox.Truncate(why.Error(), maxParkedErrorBytes),
	})
	if err != nil {
		return "", fmt.Errorf("encode parked operational event %s: %w", fw.eventID, err)
	}
	return string(bytes.TrimRight(b.Bytes(), "\n")), nil
}

// park sends fws, the operational events that kept failing, to the enqueue
// failure queue, a message each, in as few requests as SQS allows, and
// counts them (OperatorEventsParked). It fails the invocation with the
// records concerned only when they cannot be parked (or ParkQueueURL is
// not set): then the stream retries the batch, and nothing is lost.
func (h *Handler) park(ctx context.Context, inv *invocation, fws []forward, why error) *failure {
	fail := func(err error) *failure {
		return &failure{fws[0].seq, fws[len(fws)-1].seq, err}
	}
	if h.cfg.ParkQueueURL == "" {
		return fail(why)
	}
	var entries []sqstypes.SendMessageBatchRequestEntry
	flush := func() error {
		err := message.SendBatch(ctx, h.Queue, h.cfg.ParkQueueURL, entries)
		entries = entries[:0]
		return err
	}
	for i, fw := range fws {
		body, err := parkedBody(fw, why)
		if err != nil {
			return fail(err)
		}
		e := sqstypes.SendMessageBatchRequestEntry{Id: aws.String("op" + strconv.Itoa(i)), MessageBody: aws.String(body)}
		if !message.Fits(entries, e) {
			if err := flush(); err != nil {
				return fail(fmt.Errorf("park %d operational events (%v): %w", len(fws), why, err))
			}
		}
		entries = append(entries, e)
	}
	if err := flush(); err != nil {
		return fail(fmt.Errorf("park %d operational events (%v): %w", len(fws), why, err))
	}
	for _, fw := range fws {
		h.Log.WarnContext(ctx, "operational event parked on the enqueue failure queue: the operator's bus refused it; deliveries go on",
			"event_id", fw.eventID, "event_type", aws.ToString(fw.entry.DetailType), "sequence_number", fw.seq, "tries", h.cfg.PutTries, "error", why.Error())
	}
	inv.metrics.Put(metrics.OperatorEventsParked, float64(len(fws)), nil)
	return nil
}

// put sends one PutEvents request and returns the events it did not
// accept (all of them when the request failed), with why.
func (h *Handler) put(ctx context.Context, fws []forward) ([]forward, error) {
	entries := make([]ebtypes.PutEventsRequestEntry, len(fws))
	for i, f := range fws {
		entries[i] = f.entry
	}
	out, err := h.Bus.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: entries})
	if err != nil {
		return fws, fmt.Errorf("put %d operational events on the operator's bus: %w", len(fws), err)
	}
	if out.FailedEntryCount == 0 {
		return nil, nil
	}
	// Entries answer in request order; a failed one carries an ErrorCode.
	var failed []forward
	var why error
	for i, r := range out.Entries {
		if r.ErrorCode == nil || i >= len(fws) {
			continue
		}
		if why == nil {
			why = fmt.Errorf("put operational event %s (%s) on the operator's bus: %s: %s (%d of %d entries failed)",
				fws[i].eventID, aws.ToString(fws[i].entry.DetailType), aws.ToString(r.ErrorCode), aws.ToString(r.ErrorMessage), out.FailedEntryCount, len(fws))
		}
		failed = append(failed, fws[i])
	}
	if failed == nil { // a count without a failed entry: take the whole request as failed
		return fws, fmt.Errorf("put operational events on the operator's bus: %d of %d entries failed", out.FailedEntryCount, len(fws))
	}
	return failed, why
}
