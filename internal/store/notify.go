package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store/keys"
)

// A tenant's notification addresses are items of its partition
// (TENANT#<t> / NOTIFYEMAIL#<id>): read with the tenant's other items,
// erased with them. Its count of notices sent in an hour is one more
// (NOTICES#<hour>), expiring a day after.

func notifyEmailKey(tenantID, id string) map[string]types.AttributeValue {
	return key(keys.Tenant(tenantID), keys.NotifyEmail(id))
}

// PutNotifyEmail stores a new notification address of an existing tenant
// (ErrNotFound otherwise), with its CreatedAt set. The caller checks the
// count (NotifyEmails) and the address's uniqueness first.
func (s *Store) PutNotifyEmail(ctx context.Context, n domain.NotifyEmail) (domain.NotifyEmail, error) {
	if _, err := s.Tenant(ctx, n.TenantID); err != nil {
		return n, err
	}
	n.CreatedAt = s.Now().UTC()
	item, err := attributevalue.MarshalMap(n)
	if err != nil {
		return n, fmt.Errorf("marshal notification address %s: %w", n.ID, err)
	}
	err = s.putNew(ctx, withKey(item, notifyEmailKey(n.TenantID, n.ID)))
	if errors.Is(err, ErrExists) {
		return n, fmt.Errorf("notification address %s: %w", n.ID, ErrExists)
	}
	if err != nil {
		return n, fmt.Errorf("put notification address %s: %w", n.ID, err)
	}
	return n, nil
}

// NotifyEmails lists a tenant's notification addresses (at most
// domain.MaxNotifyEmails, one Query), strongly consistent.
func (s *Store) NotifyEmails(ctx context.Context, tenantID string) ([]domain.NotifyEmail, error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &s.table, ConsistentRead: aws.Bool(true),
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: keys.Tenant(tenantID)},
			":sk": &types.AttributeValueMemberS{Value: keys.NotifyEmailPrefix},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("list notification addresses of tenant %s: %w", tenantID, err)
	}
	var ns []domain.NotifyEmail
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &ns); err != nil {
		return nil, fmt.Errorf("decode notification addresses: %w", err)
	}
	return ns, nil
}

// NotifyEmail reads one notification address, or ErrNotFound.
func (s *Store) NotifyEmail(ctx context.Context, tenantID, id string) (domain.NotifyEmail, error) {
	var n domain.NotifyEmail
	return n, s.get(ctx, notifyEmailKey(tenantID, id), &n, "notification address "+id)
}

// SetNotifyStatus moves a notification address to status if it is in
// from (ErrConflict otherwise, or when there is none), and
// returns it as written. Verified stamps VerifiedAt and drops the
// verification hash: a link works once.
func (s *Store) SetNotifyStatus(ctx context.Context, tenantID, id string, from, to domain.NotifyStatus) (domain.NotifyEmail, error) {
	update := "SET #st = :to"
	vals := map[string]types.AttributeValue{
		":to": &types.AttributeValueMemberS{Value: string(to)}, ":from": &types.AttributeValueMemberS{Value: string(from)},
	}
	if to == domain.NotifyVerified {
		update += ", verified_at = :now REMOVE verify_hash"
		vals[":now"] = timeValue(s.Now())
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: notifyEmailKey(tenantID, id),
		UpdateExpression: aws.String(update), ConditionExpression: aws.String("attribute_exists(pk) AND #st = :from"),
		ExpressionAttributeNames: map[string]string{"#st": "status"}, ExpressionAttributeValues: vals,
		ReturnValues: types.ReturnValueAllNew,
	})
	if isConditionFailed(err) {
		return domain.NotifyEmail{}, fmt.Errorf("notification address %s is not %s (or is gone): %w", id, from, ErrConflict)
	}
	if err != nil {
		return domain.NotifyEmail{}, fmt.Errorf("set notification address %s %s: %w", id, to, err)
	}
	var n domain.NotifyEmail
	if err := attributevalue.UnmarshalMap(out.Attributes, &n); err != nil {
		return n, fmt.Errorf("decode notification address %s: %w", id, err)
	}
	return n, nil
}

// DeleteNotifyEmail deletes a notification address, or answers
// ErrNotFound.
func (s *Store) DeleteNotifyEmail(ctx context.Context, tenantID, id string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: &s.table, Key: notifyEmailKey(tenantID, id), ConditionExpression: aws.String("attribute_exists(pk)"),
	})
	if isConditionFailed(err) {
		return fmt.Errorf("notification address %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete notification address %s: %w", id, err)
	}
	return nil
}

// TakeNotices counts n notice e-mails against a tenant's clock hour of at
// (one UpdateItem), and reports whether they fit within limit; past it,
// nothing is counted and false is returned.
func (s *Store) TakeNotices(ctx context.Context, tenantID string, at time.Time, n, limit int) (bool, error) {
	hour := at.UTC().Truncate(time.Hour)
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: key(keys.Tenant(tenantID), keys.Notices(keys.Time(hour))),
		UpdateExpression:    aws.String("ADD sent :n SET expires_at = :exp"),
		ConditionExpression: aws.String("attribute_not_exists(sent) OR sent <= :room"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":n":    &types.AttributeValueMemberN{Value: strconv.Itoa(n)},
			":room": &types.AttributeValueMemberN{Value: strconv.Itoa(limit - n)},
			":exp":  &types.AttributeValueMemberN{Value: strconv.FormatInt(hour.Add(25*time.Hour).Unix(), 10)},
		},
	})
	if isConditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("count notices of tenant %s: %w", tenantID, err)
	}
	return true, nil
}
