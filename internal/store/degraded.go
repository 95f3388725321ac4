package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
)

// attrDegradedSince is the endpoint item's degraded mark
// (domain.Endpoint.DegradedSince).
const attrDegradedSince = "degraded_since"

// DegradedEffect is what MarkEndpointDegraded did.
type DegradedEffect struct {
	// Moved is true when this call set the mark (degraded) or removed it
	// (not degraded): of concurrent callers, one moves it.
	Moved bool
	// Since is the mark this call set or removed: the degraded episode's
	// start, which names its endpoint.degraded. Zero when nothing moved
	// (or, on a removal, when the old mark could not be read).
	Since time.Time
}

// MarkEndpointDegraded records an endpoint's failure-rate verdict in one
// conditional UpdateItem on its item: degraded sets degraded_since (now)
// only where it is absent, so an episode is marked, and its
// endpoint.degraded raised, once however many instances find it; not
// degraded removes it only where it is present. A write whose condition
// fails (marked or clear already, or the endpoint deleted meanwhile) moves
// nothing and is no error: there is nothing to raise. Neither counts as a
// revision of the endpoint (health writes do not).
func (s *Store) MarkEndpointDegraded(ctx context.Context, tenantID, endpointID string, degraded bool) (DegradedEffect, error) {
	var fx DegradedEffect
	now := s.Now().UTC()
	in := &dynamodb.UpdateItemInput{
		UpdateExpression:    aws.String("REMOVE " + attrDegradedSince),
		ConditionExpression: aws.String("attribute_exists(" + attrDegradedSince + ")"),
		ReturnValues:        types.ReturnValueUpdatedOld,
	}
	if degraded {
		in = &dynamodb.UpdateItemInput{
			UpdateExpression:          aws.String("SET " + attrDegradedSince + " = :now"),
			ConditionExpression:       aws.String("attribute_not_exists(" + attrDegradedSince + ")"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":now": timeValue(now)},
		}
	}
	out, err := s.updateExistingEndpoint(ctx, tenantID, endpointID, in)
	switch {
	case isConditionFailed(err):
		return fx, nil
	case err != nil:
		return fx, fmt.Errorf("mark endpoint %s degraded=%t: %w", endpointID, degraded, err)
	}
	fx.Moved, fx.Since = true, now
	if !degraded {
		fx.Since = time.Time{}
		// The mark as it was (UPDATED_OLD): the episode that ended.
		var was domain.Endpoint
		if attributevalue.UnmarshalMap(out.Attributes, &was) == nil && was.DegradedSince != nil {
			fx.Since = was.DegradedSince.UTC()
		}
	}
	return fx, nil
}
