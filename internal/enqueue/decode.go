package enqueue

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/messagelog"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/internal/trace"
	"github.com/hookline/hookline/outbox"
)

// decodeImage turns a stream NEW_IMAGE into an outbox event, or a
// *outbox.ValidationError saying what is wrong with it. It never panics on
// attributes of an unexpected type. On an error, the event holds the
// attributes read before it.
func decodeImage(img map[string]events.DynamoDBAttributeValue) (outbox.Event, error) {
	var e outbox.Event
	var occurred string
	for _, f := range []struct {
		name     string
		required bool
		set      func(string)
	}{
		{outbox.AttrID, true, func(s string) { e.ID = s }},
		{outbox.AttrTenantID, true, func(s string) { e.TenantID = s }},
		{outbox.AttrType, true, func(s string) { e.Type = s }},
		{outbox.AttrPayload, true, func(s string) { e.Payload = json.RawMessage(s) }},
		{outbox.AttrOccurredAt, true, func(s string) { occurred = s }},
		{outbox.AttrEndpointID, false, func(s string) { e.EndpointID = s }},
	} {
		s, err := imageString(img, f.name, f.required)
		if err != nil {
			return e, err
		}
		f.set(s)
	}
	var err error
	if e.Sequence, err = imageSequence(img); err != nil {
		return e, err
	}
	e.TraceParent = imageTraceParent(img)
	// Validate before parsing the time so the first problem reported is the
	// first in the contract's order.
	if occurred == "" {
		return e, &outbox.ValidationError{Reason: outbox.ReasonMissingField, Field: outbox.AttrOccurredAt, Detail: "is required"}
	}
	if e.OccurredAt, err = outbox.ParseOccurredAt(occurred); err != nil {
		return e, err
	}
	return e, validate(e, img)
}

// imageString is the string attribute name of img: "" when it is absent or
// null, which is an error when it is required; an error when it is not a
// string (S).
func imageString(img map[string]events.DynamoDBAttributeValue, name string, required bool) (string, error) {
	v, ok := img[name]
	if !ok || v.IsNull() {
		if required {
			return "", &outbox.ValidationError{Reason: outbox.ReasonMissingField, Field: name, Detail: "is required"}
		}
		return "", nil
	}
	if v.DataType() != events.DataTypeString {
		return "", &outbox.ValidationError{Reason: outbox.ReasonWrongType, Field: name, Detail: "must be a string (S)"}
	}
	return v.String(), nil
}

// imageSequence is img's optional sequence attribute: nil when it is absent
// or null, an error when it is not a number (N) that fits in 64 bits.
func imageSequence(img map[string]events.DynamoDBAttributeValue) (*int64, error) {
	v, ok := img[outbox.AttrSequence]
	if !ok || v.IsNull() {
		return nil, nil
	}
	if v.DataType() != events.DataTypeNumber {
		return nil, &outbox.ValidationError{Reason: outbox.ReasonWrongType, Field: outbox.AttrSequence, Detail: "must be a number (N)"}
	}
	n, err := strconv.ParseInt(v.Number(), 10, 64)
	if err != nil {
		return nil, &outbox.ValidationError{Reason: outbox.ReasonWrongType, Field: outbox.AttrSequence, Detail: "must be a 64-bit integer"}
	}
	return &n, nil
}

// imageTraceParent is img's optional traceparent when it is a string that
// is a valid traceparent, else "": a malformed one is ignored, never a
// rejection, and the event gets a trace of hookline's (trace.Derive).
func imageTraceParent(img map[string]events.DynamoDBAttributeValue) string {
	v, ok := img[outbox.AttrTraceParent]
	if !ok || v.IsNull() || v.DataType() != events.DataTypeString {
		return ""
	}
	if _, ok := trace.Parse(v.String()); !ok {
		return ""
	}
	return v.String()
}

// validate is outbox.Event.Validate, but an item of a reserved
// (operational) type passes when hookline wrote it: it carries
// opevent.AttrOrigin. A producer's item of such a type is rejected
// (reserved_type), so every operational event accepted here is hookline's,
// and only those go on (to the tenant's endpoints, and to the operator's
// bus). A hookline.test event (domain.TestEventType) must name its
// endpoint: it goes to that endpoint only (targetsOf, whatever the
// endpoint's event_types) and never to the bus.
func validate(e outbox.Event, img map[string]events.DynamoDBAttributeValue) error {
	err := e.Validate()
	var verr *outbox.ValidationError
	if !errors.As(err, &verr) || verr.Reason != outbox.ReasonReservedType {
		return err
	}
	if v, ok := img[opevent.AttrOrigin]; !ok || v.DataType() != events.DataTypeString || v.String() != opevent.Origin {
		return err
	}
	if e.Type == domain.TestEventType && e.EndpointID == "" {
		// A test event goes to the endpoint it names, and to no other.
		return &outbox.ValidationError{Reason: outbox.ReasonMissingField, Field: outbox.AttrEndpointID, Detail: "is required in a " + domain.TestEventType + " event"}
	}
	return nil
}

// logEntry is ev as the message log's pages list it, when its item is not
// in the outbox's message log index (no log_pk: every item of the outbox
// package's Item since the pages replaced that index entry); ok false when
// the index lists it. Its expiry is the item's expires_at (none when the
// item has none, or one that is not a number).
func logEntry(ev outbox.Event, img map[string]events.DynamoDBAttributeValue) (messagelog.Entry, bool) {
	if _, ok := img[outbox.AttrLogShard]; ok {
		return messagelog.Entry{}, false
	}
	e := messagelog.Entry{ID: ev.ID, TenantID: ev.TenantID, Type: ev.Type, EndpointID: ev.EndpointID, OccurredAt: ev.OccurredAt}
	if v, ok := img[outbox.AttrExpiresAt]; ok && !v.IsNull() && v.DataType() == events.DataTypeNumber {
		if n, err := strconv.ParseInt(v.Number(), 10, 64); err == nil {
			e.ExpiresAt = time.Unix(n, 0)
		}
	}
	return e, true
}
