package enqueue

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/outbox"
)

// decodeImage turns a stream NEW_IMAGE into an outbox event, or a
// *outbox.ValidationError saying what is wrong with it. It never panics on
// attributes of an unexpected type.
func decodeImage(img map[string]events.DynamoDBAttributeValue) (outbox.Event, error) {
	var e outbox.Event
	str := func(name string, required bool) (string, error) {
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
	var err error
	if e.ID, err = str(outbox.AttrID, true); err != nil {
		return e, err
	}
	if e.TenantID, err = str(outbox.AttrTenantID, true); err != nil {
		return e, err
	}
	if e.Type, err = str(outbox.AttrType, true); err != nil {
		return e, err
	}
	payload, err := str(outbox.AttrPayload, true)
	if err != nil {
		return e, err
	}
	e.Payload = json.RawMessage(payload)
	occurred, err := str(outbox.AttrOccurredAt, true)
	if err != nil {
		return e, err
	}
	if e.EndpointID, err = str(outbox.AttrEndpointID, false); err != nil {
		return e, err
	}
	if v, ok := img[outbox.AttrSequence]; ok && !v.IsNull() {
		if v.DataType() != events.DataTypeNumber {
			return e, &outbox.ValidationError{Reason: outbox.ReasonWrongType, Field: outbox.AttrSequence, Detail: "must be a number (N)"}
		}
		n, perr := strconv.ParseInt(v.Number(), 10, 64)
		if perr != nil {
			return e, &outbox.ValidationError{Reason: outbox.ReasonWrongType, Field: outbox.AttrSequence, Detail: "must be a 64-bit integer"}
		}
		e.Sequence = &n
	}
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
