package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
)

// PortalLinkKeep is how long a portal link's item outlives its expiry
// before the table's TTL deletes it: for that long its token is answered
// "expired" rather than "unknown".
const PortalLinkKeep = 24 * time.Hour

// PutPortalLink stores a new portal link (its Scopes with it) of an existing tenant (ErrNotFound
// otherwise, also for a tenant being erased), with its CreatedAt set, an
// expires_at (TTL) PortalLinkKeep after its ExpiresAt, and its place in the
// tenant's gsi1 partition (revocation by id, erasure).
func (s *Store) PutPortalLink(ctx context.Context, l domain.PortalLink) (domain.PortalLink, error) {
	if _, err := s.Tenant(ctx, l.TenantID); err != nil {
		return l, err
	}
	if erased, err := s.Erased(ctx, l.TenantID); err != nil {
		return l, err
	} else if erased {
		return l, fmt.Errorf("tenant %s is being erased: %w", l.TenantID, ErrNotFound)
	}
	l.CreatedAt = s.Now().UTC()
	item, err := attributevalue.MarshalMap(l)
	if err != nil {
		return l, fmt.Errorf("marshal portal link %s: %w", l.LinkID, err)
	}
	item["gsi1pk"] = &types.AttributeValueMemberS{Value: portalPartition(l.TenantID)}
	item["gsi1sk"] = &types.AttributeValueMemberS{Value: l.LinkID}
	item["expires_at"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(l.ExpiresAt.Add(PortalLinkKeep).Unix(), 10)}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.table, Item: withKey(item, portalKey(l.Hash)),
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	})
	if isConditionFailed(err) {
		return l, fmt.Errorf("portal link %s: %w", l.LinkID, ErrExists)
	}
	if err != nil {
		return l, fmt.Errorf("put portal link %s: %w", l.LinkID, err)
	}
	return l, nil
}

// PortalLink reads a portal link by the hash of its token, revoked or
// expired as it is (the caller tells them apart), or ErrNotFound.
func (s *Store) PortalLink(ctx context.Context, hash string) (domain.PortalLink, error) {
	var l domain.PortalLink
	return l, s.get(ctx, portalKey(hash), &l, "portal link")
}

// RevokePortalLink revokes a tenant's portal link by its id (the first
// revocation's time stays), or answers ErrNotFound.
func (s *Store) RevokePortalLink(ctx context.Context, tenantID, linkID string) error {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &s.table, IndexName: aws.String(IndexTenant),
		KeyConditionExpression: aws.String("gsi1pk = :pk AND gsi1sk = :sk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: portalPartition(tenantID)},
			":sk": &types.AttributeValueMemberS{Value: linkID},
		},
	})
	if err != nil {
		return fmt.Errorf("find portal link %s: %w", linkID, err)
	}
	if len(out.Items) == 0 {
		return fmt.Errorf("portal link %s of tenant %s: %w", linkID, tenantID, ErrNotFound)
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: map[string]types.AttributeValue{"pk": out.Items[0]["pk"], "sk": out.Items[0]["sk"]},
		UpdateExpression:          aws.String("SET revoked_at = if_not_exists(revoked_at, :now)"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": timeValue(s.Now())},
	})
	if isConditionFailed(err) {
		return fmt.Errorf("portal link %s of tenant %s: %w", linkID, tenantID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("revoke portal link %s: %w", linkID, err)
	}
	return nil
}
