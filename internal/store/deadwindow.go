package store

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store/keys"
)

// A delivery.dead coalescing window's record (DEADWINDOW#<tenant>#<endpoint>#<start>
// / DEADWINDOW) counts the deaths of one endpoint's deliveries within the
// window: count, reason_<reason> per reason, and death_<n> for the first
// domain.OpDeadSample deaths. It expires a day after the window ends.
const (
	deathAttrPrefix  = "death_"
	reasonAttrPrefix = "reason_"
	deadWindowTTL    = 24 * time.Hour
)

// AddDeath adds a dead delivery to its endpoint's coalescing window (start
// to end), creating the window's record with the first, and returns the
// window's count of deaths, this one included: 1 means this death opened
// the window. The first domain.OpDeadSample deaths are kept whole (a
// second write each); the others only counted, so a window's record stays
// small whatever the storm.
func (s *Store) AddDeath(ctx context.Context, tenantID, endpointID string, start, end time.Time, d domain.OpDeath) (int, error) {
	k := deadWindowKey(tenantID, endpointID, start)
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: k,
		UpdateExpression:         aws.String("ADD #count :one, #reason :one SET tenant_id = :t, endpoint_id = :e, window_end = :end, expires_at = :exp, gsi1pk = :g, gsi1sk = :gs"),
		ExpressionAttributeNames: map[string]string{"#count": "count", "#reason": reasonAttrPrefix + string(d.Reason)},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":one": &types.AttributeValueMemberN{Value: "1"},
			":t":   &types.AttributeValueMemberS{Value: tenantID},
			":e":   &types.AttributeValueMemberS{Value: endpointID},
			":end": timeValue(end),
			":exp": &types.AttributeValueMemberN{Value: strconv.FormatInt(end.Add(deadWindowTTL).Unix(), 10)},
			// Listed per tenant, for its erasure.
			":g":  &types.AttributeValueMemberS{Value: keys.DeadWindowsIndex(tenantID)},
			":gs": &types.AttributeValueMemberS{Value: endpointID + "#" + sortableTime(start)},
		},
		ReturnValues: types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return 0, fmt.Errorf("add death of %s to its window: %w", d.DeliveryID, err)
	}
	n := 0
	if v, ok := out.Attributes["count"].(*types.AttributeValueMemberN); ok {
		n, _ = strconv.Atoi(v.Value)
	}
	if n < 1 || n > domain.OpDeadSample {
		return n, nil
	}
	av, err := attributevalue.Marshal(d)
	if err != nil {
		return n, fmt.Errorf("encode death of %s: %w", d.DeliveryID, err)
	}
	if _, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: k,
		UpdateExpression:          aws.String("SET #death = :d"),
		ExpressionAttributeNames:  map[string]string{"#death": deathAttrPrefix + strconv.Itoa(n)},
		ExpressionAttributeValues: map[string]types.AttributeValue{":d": av},
	}); err != nil {
		return n, fmt.Errorf("keep death of %s in its window: %w", d.DeliveryID, err)
	}
	return n, nil
}

// DeadWindow reads an endpoint's coalescing window (by its start): its
// count, its count per reason and the deaths kept, in the order they were
// added; or ErrNotFound when no death was added to it. The ids and bounds
// of the result are left to the caller.
func (s *Store) DeadWindow(ctx context.Context, tenantID, endpointID string, start time.Time) (domain.OpDeliveryDeadEvent, error) {
	var w domain.OpDeliveryDeadEvent
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: deadWindowKey(tenantID, endpointID, start), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return w, fmt.Errorf("get dead window of endpoint %s: %w", endpointID, err)
	}
	if out.Item == nil {
		return w, fmt.Errorf("dead window of endpoint %s at %s: %w", endpointID, sortableTime(start), ErrNotFound)
	}
	w.Reasons = map[domain.DeadReason]int{}
	var kept []int
	byN := map[int]domain.OpDeath{}
	for name, v := range out.Item {
		num, isN := v.(*types.AttributeValueMemberN)
		switch {
		case name == "count" && isN:
			w.Count, _ = strconv.Atoi(num.Value)
		case strings.HasPrefix(name, reasonAttrPrefix) && isN:
			c, _ := strconv.Atoi(num.Value)
			w.Reasons[domain.DeadReason(strings.TrimPrefix(name, reasonAttrPrefix))] = c
		case strings.HasPrefix(name, deathAttrPrefix):
			n, err := strconv.Atoi(strings.TrimPrefix(name, deathAttrPrefix))
			var d domain.OpDeath
			if err != nil || attributevalue.Unmarshal(v, &d) != nil {
				continue
			}
			kept, byN[n] = append(kept, n), d
		}
	}
	sort.Ints(kept)
	for _, n := range kept {
		w.Deaths = append(w.Deaths, byN[n])
	}
	return w, nil
}
