package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/store/keys"
)

// An endpoint's gate (GATE#<tenant>#<endpoint> / GATE) bounds how many
// deliver invocations send to it at once: slot attributes s0, s1, ... each
// hold the time (Unix milliseconds) until which an invocation holds it, and
// probe the time until which the circuit breaker's one probe holds it. A
// slot whose time has passed is free, so a holder that crashed frees its
// slot by itself when the hold it asked for runs out; a holder that is done
// frees it at once (ReleaseGate). An endpoint starts with few slots
// (GateAsk.Slots) and gets more (GateAsk.Fast) while its holders keep
// finishing fast: each such release sets fast_until a few seconds ahead,
// and a slow one removes it. The item expires GateTTL after its last
// hold; nothing reads an old one.
const (
	// GateTTL is how long after its last hold a gate's item is kept.
	GateTTL = 24 * time.Hour
	// ProbeSlot is the gate slot of the circuit breaker's probe.
	ProbeSlot = -1
	// maxGateSlots bounds a gate's slots (TakeGate refuses more).
	maxGateSlots = 100
)

// Hold is a gate slot held until Until (TakeGate), to give back with
// ReleaseGate.
type Hold struct {
	Slot  int
	Until time.Time
	// RestUntil, set by the holder before ReleaseGate, keeps the slot held
	// until then after the release: a tenant's gate rests a slot that a
	// slow batch held (deliver.TenantRest). Zero, or a time already past:
	// the release frees it at once.
	RestUntil time.Time
}

// TenantGateID is the endpoint id of a tenant's own gate: the gate that
// bounds how many deliver invocations send to any of the tenant's
// endpoints at once, beside each endpoint's. Endpoint ids are hookline's
// own ("ep_" and a random part), so none is "*"; the gate's item is
// GATE#<tenant>#* and it is read and taken as an endpoint's gate is.
const TenantGateID = "*"

// TenantGate is the reference of a tenant's own gate (TenantGateID).
func TenantGate(tenantID string) EndpointRef {
	return EndpointRef{TenantID: tenantID, EndpointID: TenantGateID}
}

// GateAsk is what TakeGate asks of an endpoint's gate.
type GateAsk struct {
	// Slots is how many invocations may hold the gate at once while the
	// endpoint has not shown itself fast (no fast_until after Now); Fast,
	// when larger, while it has. Slot numbers from Slots up are taken only
	// then. Both at most 100.
	Slots, Fast int
	// Probe asks for the circuit breaker's one probe slot instead.
	Probe bool
	// Start is the slot tried first (modulo the slots that may be taken):
	// a random number spreads concurrent callers over the slots.
	Start int
	// Now is the time a hold must have run out by for its slot to be free;
	// Until is how long the new hold lasts, should it not be released.
	Now, Until time.Time
}

// gateRef is the endpoint a gate's partition key names. Tenant ids hold
// no "#" (the API refuses them); endpoint ids are hookline's own.
func gateRef(pk string) (EndpointRef, bool) {
	rest, ok := strings.CutPrefix(pk, keys.GatePrefix)
	if !ok {
		return EndpointRef{}, false
	}
	i := strings.LastIndex(rest, "#")
	if i < 0 {
		return EndpointRef{}, false
	}
	return EndpointRef{TenantID: rest[:i], EndpointID: rest[i+1:]}, true
}

func slotAttr(slot int) string {
	if slot == ProbeSlot {
		return "probe"
	}
	return "s" + strconv.Itoa(slot)
}

// noSlot is what freeSlot answers when every slot is held.
const noSlot = ProbeSlot - 1

// TakeGate takes a slot of an endpoint's gate, as a asks. ok is false when
// every slot that may be taken is held past a.Now. It is one conditional
// UpdateItem when the slot it tries first is free; when it is not, the
// failed condition returns the gate's item, and it tries a free slot from
// it, at most three times in all. Concurrent callers never hold one slot
// between them.
func (s *Store) TakeGate(ctx context.Context, tenantID, endpointID string, a GateAsk) (h Hold, ok bool, err error) {
	if a.Slots < 1 || a.Slots > maxGateSlots || a.Fast > maxGateSlots {
		return Hold{}, false, fmt.Errorf("gate of endpoint %s: %d slots, %d when fast", endpointID, a.Slots, a.Fast)
	}
	slot := ProbeSlot
	if !a.Probe {
		n := max(a.Slots, a.Fast)
		slot = ((a.Start % n) + n) % n
	}
	for range 3 {
		item, err := s.takeGateSlot(ctx, tenantID, endpointID, slot, a)
		if err != nil {
			return Hold{}, false, err
		}
		if item == nil {
			return Hold{Slot: slot, Until: a.Until}, true, nil
		}
		if slot = freeSlot(item, a); slot == noSlot {
			return Hold{}, false, nil
		}
	}
	return Hold{}, false, nil
}

// takeGateSlot tries to hold one slot; when it is held (or is a fast slot
// and the endpoint is not fast), it returns the gate's item as the failed
// condition found it.
func (s *Store) takeGateSlot(ctx context.Context, tenantID, endpointID string, slot int, a GateAsk) (map[string]types.AttributeValue, error) {
	cond := "(attribute_not_exists(#s) OR #s < :now)"
	if slot >= a.Slots {
		cond += " AND fast_until > :now"
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           &s.table,
		Key:                                 gateKey(tenantID, endpointID),
		UpdateExpression:                    aws.String("SET #s = :until, expires_at = :exp"),
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            map[string]string{"#s": slotAttr(slot)},
		ExpressionAttributeValues:           map[string]types.AttributeValue{":until": millis(a.Until), ":now": millis(a.Now), ":exp": &types.AttributeValueMemberN{Value: strconv.FormatInt(a.Until.Add(GateTTL).Unix(), 10)}},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if ccf.Item == nil { // not returned: take the slot tried as held
			ccf.Item = map[string]types.AttributeValue{slotAttr(slot): millis(a.Until)}
		}
		return ccf.Item, nil
	}
	if err != nil {
		return nil, fmt.Errorf("take a gate slot of endpoint %s: %w", endpointID, err)
	}
	return nil, nil
}

// freeSlot is a slot of item that a may take, or noSlot.
func freeSlot(item map[string]types.AttributeValue, a GateAsk) int {
	now := a.Now.UnixMilli()
	if a.Probe {
		if int64(numberAttr(item, slotAttr(ProbeSlot))) < now {
			return ProbeSlot
		}
		return noSlot
	}
	n := a.Slots
	if int64(numberAttr(item, "fast_until")) > now {
		n = max(a.Slots, a.Fast)
	}
	for i := range n {
		if int64(numberAttr(item, slotAttr(i))) < now {
			return i
		}
	}
	return noSlot
}

// ReleaseGate gives a held slot back (free at once, or at h.RestUntil),
// unless its hold ran out and another caller took it since: then it is
// that caller's, and left alone. With
// fastUntil the endpoint counts as fast (its fast slots may be taken)
// until then; without, it no longer does.
func (s *Store) ReleaseGate(ctx context.Context, tenantID, endpointID string, h Hold, fastUntil *time.Time) error {
	in := &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       gateKey(tenantID, endpointID),
		UpdateExpression:          aws.String("SET #s = :zero REMOVE fast_until"),
		ConditionExpression:       aws.String("#s = :until"),
		ExpressionAttributeNames:  map[string]string{"#s": slotAttr(h.Slot)},
		ExpressionAttributeValues: map[string]types.AttributeValue{":until": millis(h.Until), ":zero": &types.AttributeValueMemberN{Value: "0"}},
	}
	if !h.RestUntil.IsZero() {
		// Held (resting) until then; a later hold's TakeGate finds it so.
		in.ExpressionAttributeValues[":zero"] = millis(h.RestUntil)
	}
	if fastUntil != nil {
		in.UpdateExpression = aws.String("SET #s = :zero, fast_until = :fast")
		in.ExpressionAttributeValues[":fast"] = millis(*fastUntil)
	}
	if _, err := s.db.UpdateItem(ctx, in); err != nil && !isConditionFailed(err) {
		return fmt.Errorf("release a gate slot of endpoint %s: %w", endpointID, err)
	}
	return nil
}

// MarkGate sets (or, nil, clears) until when an endpoint counts as fast,
// for the invocations that send to it without a slot while it does (the
// deliver function's fast path): one unconditional UpdateItem.
func (s *Store) MarkGate(ctx context.Context, tenantID, endpointID string, fastUntil *time.Time) error {
	in := &dynamodb.UpdateItemInput{TableName: &s.table, Key: gateKey(tenantID, endpointID), UpdateExpression: aws.String("REMOVE fast_until")}
	if fastUntil != nil {
		in.UpdateExpression = aws.String("SET fast_until = :fast, expires_at = :exp")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":fast": millis(*fastUntil), ":exp": &types.AttributeValueMemberN{Value: strconv.FormatInt(fastUntil.Add(GateTTL).Unix(), 10)}}
	}
	if _, err := s.db.UpdateItem(ctx, in); err != nil {
		return fmt.Errorf("mark the gate of endpoint %s: %w", endpointID, err)
	}
	return nil
}

func millis(t time.Time) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(t.UnixMilli(), 10)}
}
