package opevent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/outboxwrite"
	"github.com/hookline/hookline/outbox"
)

// AttrOrigin is the outbox item attribute (S) that marks an item written by
// hookline; its value is Origin. enqueue accepts an item of a reserved type
// only with it.
const AttrOrigin = "hookline_origin"

// Origin is AttrOrigin's value.
const Origin = "hookline"

// Event is one operational event to write.
type Event struct {
	// ID is the event id: ID derives it from what the event is about.
	ID       string
	TenantID string
	// Type is one of domain.OpEventTypes.
	Type string
	// Payload is the event's data: a domain.OpEndpointEvent or a
	// domain.OpDeliveryDeadEvent.
	Payload any
	// At is when it happened (the event's occurred_at).
	At time.Time
}

// ID derives an operational event's id from its type and the parts that
// name what it is about (tenant, endpoint, episode or window): the same
// parts give the same id, so an emission retried writes one event.
func ID(eventType string, parts ...string) string {
	h := sha256.Sum256([]byte(eventType + "\x00" + strings.Join(parts, "\x00")))
	return "hl_" + strings.ReplaceAll(eventType, ".", "_") + "_" + hex.EncodeToString(h[:16])
}

// Episode renders a time that names an episode (an endpoint's failing
// since, a window's start) for ID, to the nanosecond.
func Episode(t time.Time) string { return strconv.FormatInt(t.UnixNano(), 10) }

// Writer writes operational events into the outbox table.
type Writer struct {
	DB outboxwrite.PutItemAPI
	// Table is the outbox table's name.
	Table string
}

// Emit writes ev into the outbox, once: an event with its id already there
// is not an error.
func (w *Writer) Emit(ctx context.Context, ev Event) error {
	item, err := Item(ev)
	if err != nil {
		return err
	}
	// Not written: written by an earlier try.
	if _, err := outboxwrite.PutNew(ctx, w.DB, w.Table, item); err != nil {
		return fmt.Errorf("write %s event %s: %w", ev.Type, ev.ID, err)
	}
	return nil
}

// Item is ev's outbox item: the producer contract's attributes (valid by
// outbox.Event.Validate but for the reserved type, which is the point) and
// AttrOrigin. It expires outbox.DefaultRetention after ev.At.
func Item(ev Event) (map[string]types.AttributeValue, error) {
	if !domain.IsOperational(ev.Type) {
		return nil, fmt.Errorf("%q is not an operational event type", ev.Type)
	}
	return item(ev, "")
}

// TestItem is the outbox item of a hookline.test event (domain.TestEvent)
// with the given id, for the tenant's endpoint endpointID only, asked for
// at: as Item, with endpoint_id set, so enqueue sends it to that endpoint
// alone, whatever its event_types.
func TestItem(id, tenantID, endpointID string, at time.Time) (map[string]types.AttributeValue, error) {
	if endpointID == "" {
		return nil, errors.New("a test event names its endpoint")
	}
	payload := domain.TestEvent{TenantID: tenantID, EndpointID: endpointID, Message: domain.TestEventMessage, RequestedAt: at.UTC()}
	return item(Event{ID: id, TenantID: tenantID, Type: domain.TestEventType, Payload: payload, At: at}, endpointID)
}

// item builds a reserved-type event's outbox item, with endpoint_id when
// endpointID is set.
func item(ev Event, endpointID string) (map[string]types.AttributeValue, error) {
	payload, err := json.Marshal(ev.Payload)
	if err != nil {
		return nil, fmt.Errorf("encode %s payload: %w", ev.Type, err)
	}
	oe := outbox.Event{ID: ev.ID, TenantID: ev.TenantID, Type: ev.Type, Payload: payload, OccurredAt: ev.At, EndpointID: endpointID}
	var verr *outbox.ValidationError
	if err := oe.Validate(); !errors.As(err, &verr) || verr.Reason != outbox.ReasonReservedType {
		return nil, fmt.Errorf("%s event %s: %v", ev.Type, ev.ID, err)
	}
	it := map[string]types.AttributeValue{
		outbox.AttrID:         &types.AttributeValueMemberS{Value: ev.ID},
		outbox.AttrTenantID:   &types.AttributeValueMemberS{Value: ev.TenantID},
		outbox.AttrType:       &types.AttributeValueMemberS{Value: ev.Type},
		outbox.AttrPayload:    &types.AttributeValueMemberS{Value: string(payload)},
		outbox.AttrOccurredAt: &types.AttributeValueMemberS{Value: ev.At.UTC().Format(time.RFC3339Nano)},
		outbox.AttrExpiresAt:  &types.AttributeValueMemberN{Value: strconv.FormatInt(ev.At.Add(outbox.DefaultRetention).Unix(), 10)},
		AttrOrigin:            &types.AttributeValueMemberS{Value: Origin},
	}
	if endpointID != "" {
		it[outbox.AttrEndpointID] = &types.AttributeValueMemberS{Value: endpointID}
	}
	return it, nil
}

// Window is the coalescing window of delivery.dead that at falls in: the
// windows of length size are aligned on the Unix epoch, so every function
// computes the same one. size must be positive.
func Window(at time.Time, size time.Duration) (start, end time.Time) {
	start = at.Truncate(size).UTC()
	return start, start.Add(size)
}

// MaxNoticeDelay is the longest a DeadNotice can be delayed: SQS's largest
// DelaySeconds, 900 s. A window is at most this long.
const MaxNoticeDelay = 15 * time.Minute

// NoticeGrace is added to a notice's delay past its window's end, so that a
// death recorded just before the end is in the window's record when the
// notice reads it (within MaxNoticeDelay).
const NoticeGrace = 2 * time.Second

// NoticeDelay is how long the notice of the window ending at end waits
// when sent at now: until end plus NoticeGrace, in whole seconds, within
// [0, MaxNoticeDelay].
func NoticeDelay(now, end time.Time) time.Duration {
	d := end.Sub(now) + NoticeGrace
	d = (d + time.Second - 1).Truncate(time.Second)
	return min(max(d, 0), MaxNoticeDelay)
}

// DeadNotice names a delivery.dead coalescing window whose summary is due:
// the message deliver sends to the replay worker's operations queue as
// {"dead_notice": {...}}.
type DeadNotice struct {
	TenantID    string    `json:"tenant_id"`
	EndpointID  string    `json:"endpoint_id"`
	WindowStart time.Time `json:"window_start"`
	WindowEnd   time.Time `json:"window_end"`
}

// NoticeBody is the operations queue message that carries n.
func NoticeBody(n DeadNotice) (string, error) {
	b, err := json.Marshal(struct {
		DeadNotice DeadNotice `json:"dead_notice"`
	}{n})
	return string(b), err
}

// DeadSummary is the delivery.dead event of the window n names, summed up
// in w (the window's record), or false when it holds no death.
func DeadSummary(n DeadNotice, w domain.OpDeliveryDeadEvent) (Event, bool) {
	if w.Count == 0 {
		return Event{}, false
	}
	w.TenantID, w.EndpointID, w.WindowStart, w.WindowEnd = n.TenantID, n.EndpointID, n.WindowStart, n.WindowEnd
	if w.Deaths == nil {
		w.Deaths = []domain.OpDeath{}
	}
	return Event{
		ID:       ID(domain.OpDeliveryDead, n.TenantID, n.EndpointID, Episode(n.WindowStart)),
		TenantID: n.TenantID, Type: domain.OpDeliveryDead, Payload: w, At: n.WindowEnd,
	}, true
}

// DeathWindows adds a dead delivery to its endpoint's coalescing window and
// returns the window's count (store.Store.AddDeath).
type DeathWindows interface {
	AddDeath(ctx context.Context, tenantID, endpointID string, start, end time.Time, d domain.OpDeath) (int, error)
}

// NoticeSender sends a DeadNotice to the operations queue.
type NoticeSender interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// NoteDeath adds the death d of one of a tenant's endpoint's deliveries,
// at now, to the endpoint's window of length window (at most
// MaxNoticeDelay); the death that opens the window sends the window's
// DeadNotice to queueURL, delayed until the window ends. The death of an
// operational event's delivery is not noted: it would raise an
// operational event about an operational event.
func NoteDeath(ctx context.Context, w DeathWindows, q NoticeSender, queueURL string, window time.Duration, now time.Time, tenantID, endpointID string, d domain.OpDeath) error {
	if domain.IsOperational(d.EventType) {
		return nil
	}
	start, end := Window(now, min(window, MaxNoticeDelay))
	n, err := w.AddDeath(ctx, tenantID, endpointID, start, end, d)
	if err != nil || n != 1 {
		return err // n > 1: the window's notice is on its way
	}
	body, err := NoticeBody(DeadNotice{TenantID: tenantID, EndpointID: endpointID, WindowStart: start, WindowEnd: end})
	if err != nil {
		return err
	}
	_, err = q.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl: aws.String(queueURL), MessageBody: aws.String(body),
		DelaySeconds: int32(NoticeDelay(now, end) / time.Second),
	})
	if err != nil {
		return fmt.Errorf("send the delivery.dead notice of endpoint %s: %w", endpointID, err)
	}
	return nil
}
