package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store/keys"
)

// PutRejection records a rejected outbox item (idempotently: the same item
// rejected twice is one record).
func (s *Store) PutRejection(ctx context.Context, r domain.Rejection) error {
	now := s.Now().UTC()
	r.RejectedAt = now
	item, err := attributevalue.MarshalMap(r)
	if err != nil {
		return fmt.Errorf("marshal rejection %s: %w", r.Key, err)
	}
	item["expires_at"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(s.Retention).Unix(), 10)}
	if r.TenantID != "" {
		item["gsi1pk"] = &types.AttributeValueMemberS{Value: keys.RejectedIndex(r.TenantID)}
		item["gsi1sk"] = &types.AttributeValueMemberS{Value: keys.TimeID(now, r.Key)}
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: withKey(item, key(keys.Rejected(r.Key), keys.RejectedSK))})
	if err != nil {
		return fmt.Errorf("put rejection %s: %w", r.Key, err)
	}
	return nil
}

// Rejection reads a rejection record by its key, or ErrNotFound.
func (s *Store) Rejection(ctx context.Context, k string) (domain.Rejection, error) {
	var r domain.Rejection
	err := s.get(ctx, key(keys.Rejected(k), keys.RejectedSK), &r, "rejection "+k)
	return r, err
}
