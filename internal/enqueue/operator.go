package enqueue

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/hookline/hookline/internal/domain"
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

// OperatorDetail is the detail of an event on the operator's bus: the
// outbox event, its payload (one of domain's Op*Event structs) as data.
// The event's detail-type is its Type. ID is the outbox event's id, unique
// per event: an event may reach the bus twice (at least once), and a
// consumer that must not act twice deduplicates on it.
type OperatorDetail struct {
	ID         string          `json:"id"`
	TenantID   string          `json:"tenant_id"`
	Type       string          `json:"type"`
	OccurredAt time.Time       `json:"occurred_at"`
	Data       json.RawMessage `json:"data"`
}

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

// forwardAll puts the operational events of the batch on the operator's
// bus, in stream order, in as few PutEvents requests as the limits allow.
// A request that fails, or an entry EventBridge did not accept (throttled,
// an internal failure), fails the invocation with the records concerned, so
// the stream retries the batch: the retry puts every operational event of
// the batch again, those already put included (at least once; the detail's
// id deduplicates).
func (h *Handler) forwardAll(ctx context.Context, fws []forward) *failure {
	for len(fws) > 0 {
		n, size := 0, 0
		for n < len(fws) && n < MaxPutEntries && size+PutEntrySize(fws[n].entry) <= MaxPutBytes {
			size += PutEntrySize(fws[n].entry)
			n++
		}
		if f := h.put(ctx, fws[:n]); f != nil {
			return f
		}
		fws = fws[n:]
	}
	return nil
}

// put sends one PutEvents request.
func (h *Handler) put(ctx context.Context, fws []forward) *failure {
	entries := make([]ebtypes.PutEventsRequestEntry, len(fws))
	for i, f := range fws {
		entries[i] = f.entry
	}
	out, err := h.Bus.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: entries})
	if err != nil {
		return &failure{fws[0].seq, fws[len(fws)-1].seq, fmt.Errorf("put %d operational events on the operator's bus: %w", len(fws), err)}
	}
	if out.FailedEntryCount == 0 {
		return nil
	}
	// Entries answer in request order; a failed one carries an ErrorCode.
	var failed *failure
	for i, r := range out.Entries {
		if r.ErrorCode == nil || i >= len(fws) {
			continue
		}
		if failed == nil {
			failed = &failure{first: fws[i].seq, err: fmt.Errorf("put operational event %s (%s) on the operator's bus: %s: %s (%d of %d entries failed)",
				fws[i].eventID, aws.ToString(fws[i].entry.DetailType), aws.ToString(r.ErrorCode), aws.ToString(r.ErrorMessage), out.FailedEntryCount, len(fws))}
		}
		failed.last = fws[i].seq
	}
	if failed == nil { // a count without a failed entry: take the whole request as failed
		return &failure{fws[0].seq, fws[len(fws)-1].seq, fmt.Errorf("put operational events on the operator's bus: %d of %d entries failed", out.FailedEntryCount, len(fws))}
	}
	return failed
}
