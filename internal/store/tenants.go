package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store/keys"
)

// ErrExists is returned when creating something that already exists.
var ErrExists = errors.New("already exists")

// CreateTenant writes a new tenant, or ErrExists: also for the id of a
// tenant erased, while its tombstone lasts (TombstoneTTL), which would drop
// the new tenant's events.
func (s *Store) CreateTenant(ctx context.Context, t domain.Tenant) (domain.Tenant, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: tombstoneKey(t.TenantID), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return t, fmt.Errorf("create tenant %s: %w", t.TenantID, err)
	}
	if out.Item != nil {
		return t, fmt.Errorf("tenant %s is being erased: %w", t.TenantID, ErrExists)
	}
	t.CreatedAt = s.Now().UTC()
	item, err := attributevalue.MarshalMap(t)
	if err != nil {
		return t, fmt.Errorf("marshal tenant %s: %w", t.TenantID, err)
	}
	err = s.putNew(ctx, withKey(item, tenantKey(t.TenantID)))
	if errors.Is(err, ErrExists) {
		return t, fmt.Errorf("tenant %s: %w", t.TenantID, ErrExists)
	}
	if err != nil {
		return t, fmt.Errorf("create tenant %s: %w", t.TenantID, err)
	}
	return t, nil
}

// putNew writes item (which has a created_at) unless an item with its key
// exists: then ErrExists. The SDK retries a put whose answer it did not get
// (a timeout, a damaged response), and the retry then finds the item the
// first attempt wrote: an item with the same created_at, this put's clock
// to the nanosecond, is that write, not another's, and putNew succeeds.
func (s *Store) putNew(ctx context.Context, item map[string]types.AttributeValue) error {
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.table, Item: item,
		ConditionExpression:                 aws.String("attribute_not_exists(pk)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		mine, _ := item["created_at"].(*types.AttributeValueMemberS)
		theirs, _ := ccf.Item["created_at"].(*types.AttributeValueMemberS)
		if mine != nil && theirs != nil && mine.Value == theirs.Value {
			return nil
		}
		return ErrExists
	}
	return err
}

// Tenant reads a tenant, or ErrNotFound.
func (s *Store) Tenant(ctx context.Context, id string) (domain.Tenant, error) {
	var t domain.Tenant
	return t, s.get(ctx, tenantKey(id), &t, "tenant "+id)
}

// PutAPIKey stores a new key of an existing tenant (ErrNotFound otherwise,
// also for a tenant being erased: a key made while the erasure runs would
// outlive it). One transaction writes the key (by its hash), its reference
// in the tenant's partition (KeyRef, by its id) and checks that the
// tenant has no tombstone: either the tombstone was first and the key is
// refused, or the key was first and Tombstone's strongly consistent read
// of the references finds and revokes it.
func (s *Store) PutAPIKey(ctx context.Context, k domain.APIKey) (domain.APIKey, error) {
	if _, err := s.Tenant(ctx, k.TenantID); err != nil {
		return k, err
	}
	k.CreatedAt = s.Now().UTC()
	item, err := attributevalue.MarshalMap(k)
	if err != nil {
		return k, fmt.Errorf("marshal API key %s: %w", k.KeyID, err)
	}
	item["gsi1pk"] = &types.AttributeValueMemberS{Value: keys.KeysIndex(k.TenantID)}
	item["gsi1sk"] = &types.AttributeValueMemberS{Value: k.KeyID}
	ref := withKey(map[string]types.AttributeValue{
		"hash": &types.AttributeValueMemberS{Value: k.Hash}, "tenant_id": &types.AttributeValueMemberS{Value: k.TenantID},
	}, keyRefKey(k.TenantID, k.KeyID))
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{ConditionCheck: &types.ConditionCheck{TableName: &s.table, Key: tombstoneKey(k.TenantID), ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Put: &types.Put{TableName: &s.table, Item: withKey(item, apiKeyKey(k.Hash)), ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Put: &types.Put{TableName: &s.table, Item: ref, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
	}})
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) && len(tce.CancellationReasons) > 0 && aws.ToString(tce.CancellationReasons[0].Code) == "ConditionalCheckFailed" {
		return k, fmt.Errorf("tenant %s is being erased: %w", k.TenantID, ErrNotFound)
	}
	if err != nil {
		return k, fmt.Errorf("put API key %s: %w", k.KeyID, err)
	}
	return k, nil
}

// TenantForKey returns the tenant of an unrevoked key hash, or ErrNotFound;
// also ErrNotFound while the key's tenant has a tombstone (is being
// erased), whatever the key says: a key the erasure's revocation missed
// never authenticates. Two strongly consistent reads (the key, then the
// tombstone), 1 read unit each.
func (s *Store) TenantForKey(ctx context.Context, hash string) (string, error) {
	var k domain.APIKey
	if err := s.get(ctx, apiKeyKey(hash), &k, "API key"); err != nil {
		return "", err
	}
	if k.RevokedAt != nil {
		return "", fmt.Errorf("API key %s is revoked: %w", k.KeyID, ErrNotFound)
	}
	erased, err := s.Erased(ctx, k.TenantID)
	if err != nil {
		return "", fmt.Errorf("API key %s: %w", k.KeyID, err)
	}
	if erased {
		return "", fmt.Errorf("API key %s: tenant %s is being erased: %w", k.KeyID, k.TenantID, ErrNotFound)
	}
	return k.TenantID, nil
}

// RevokeAPIKey revokes a tenant's key by its id, or answers ErrNotFound.
// It finds the key's hash by its reference (KeyRef, a strongly consistent
// read), or, for a key made before references were written, in the KEYS
// index.
func (s *Store) RevokeAPIKey(ctx context.Context, tenantID, keyID string) error {
	hash, err := s.keyHash(ctx, tenantID, keyID)
	if err != nil {
		return err
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: apiKeyKey(hash),
		UpdateExpression:          aws.String("SET revoked_at = if_not_exists(revoked_at, :now)"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": timeValue(s.Now())},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		// Found by an index or reference that outlived the key's item (an
		// erasure deleted it meanwhile): there is no key to revoke.
		return fmt.Errorf("API key %s of tenant %s: %w", keyID, tenantID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("revoke API key %s: %w", keyID, err)
	}
	return nil
}

// keyHash is the hash of a tenant's key id: from its reference, else from
// the KEYS index; ErrNotFound when neither has it.
func (s *Store) keyHash(ctx context.Context, tenantID, keyID string) (string, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: keyRefKey(tenantID, keyID), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return "", fmt.Errorf("find API key %s: %w", keyID, err)
	}
	if h, ok := out.Item["hash"].(*types.AttributeValueMemberS); ok {
		return h.Value, nil
	}
	q, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &s.table, IndexName: aws.String(IndexTenant),
		KeyConditionExpression: aws.String("gsi1pk = :pk AND gsi1sk = :sk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: keys.KeysIndex(tenantID)},
			":sk": &types.AttributeValueMemberS{Value: keyID},
		},
	})
	if err != nil {
		return "", fmt.Errorf("find API key %s: %w", keyID, err)
	}
	if len(q.Items) == 0 {
		return "", fmt.Errorf("API key %s of tenant %s: %w", keyID, tenantID, ErrNotFound)
	}
	var k domain.APIKey
	if err := attributevalue.UnmarshalMap(q.Items[0], &k); err != nil {
		return "", fmt.Errorf("decode API key %s: %w", keyID, err)
	}
	return k.Hash, nil
}

// IndexTenant is the state table's per-tenant listing index.
const IndexTenant = "gsi1"

func isConditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// get reads one item into v, or returns ErrNotFound naming what.
func (s *Store) get(ctx context.Context, k map[string]types.AttributeValue, v any, what string) error {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: k, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return fmt.Errorf("get %s: %w", what, err)
	}
	if out.Item == nil {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	if err := attributevalue.UnmarshalMap(out.Item, v); err != nil {
		return fmt.Errorf("decode %s: %w", what, err)
	}
	return nil
}
