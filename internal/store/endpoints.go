package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store/keys"
)

// CreateEndpoint writes a new endpoint, or ErrExists.
func (s *Store) CreateEndpoint(ctx context.Context, e domain.Endpoint) (domain.Endpoint, error) {
	e.CreatedAt = s.Now().UTC()
	item, err := attributevalue.MarshalMap(e)
	if err != nil {
		return e, fmt.Errorf("marshal endpoint %s: %w", e.EndpointID, err)
	}
	err = s.putNew(ctx, withKey(item, endpointKey(e.TenantID, e.EndpointID)))
	if errors.Is(err, ErrExists) {
		return e, fmt.Errorf("endpoint %s: %w", e.EndpointID, ErrExists)
	}
	if err != nil {
		return e, fmt.Errorf("create endpoint %s: %w", e.EndpointID, err)
	}
	return e, nil
}

// CountEndpoints counts a tenant's endpoints, up to upTo: a strongly
// consistent Query with Select COUNT over the tenant's endpoint items,
// each page limited to what is left to count, so it reads at most upTo
// items (billed by their size: 100 endpoints of 16 KiB are about 200 read
// units), however many the tenant has. Creating an endpoint calls it
// once; nothing on a delivery's path does.
func (s *Store) CountEndpoints(ctx context.Context, tenantID string, upTo int) (int, error) {
	n := 0
	var start map[string]types.AttributeValue
	for n < upTo {
		out, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName:              &s.table,
			KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :sk)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":pk": &types.AttributeValueMemberS{Value: keys.Tenant(tenantID)},
				":sk": &types.AttributeValueMemberS{Value: keys.EndpointPrefix},
			},
			Select: types.SelectCount, ConsistentRead: aws.Bool(true),
			Limit: aws.Int32(int32(upTo - n)), ExclusiveStartKey: start,
		})
		if err != nil {
			return 0, fmt.Errorf("count endpoints of tenant %s: %w", tenantID, err)
		}
		n += int(out.Count)
		if start = out.LastEvaluatedKey; start == nil {
			break
		}
	}
	return n, nil
}

// ListEndpoints returns a page of a tenant's endpoints in id order, at most
// limit, after the cursor a previous page returned ("" for the first). The
// cursor holds an endpoint id only, so it cannot reach another tenant.
func (s *Store) ListEndpoints(ctx context.Context, tenantID string, limit int, cursor string) ([]domain.Endpoint, string, error) {
	in := &dynamodb.QueryInput{
		TableName:              &s.table,
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: keys.Tenant(tenantID)},
			":sk": &types.AttributeValueMemberS{Value: keys.EndpointPrefix},
		},
		Limit: aws.Int32(int32(limit)),
	}
	if cursor != "" {
		after, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil || len(after) == 0 || !utf8.Valid(after) { // an endpoint id is non-empty UTF-8: DynamoDB refuses others as a key (a 500)
			return nil, "", fmt.Errorf("cursor: %w", ErrBadCursor)
		}
		in.ExclusiveStartKey = endpointKey(tenantID, string(after))
	}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return nil, "", fmt.Errorf("list endpoints of tenant %s: %w", tenantID, err)
	}
	var es []domain.Endpoint
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &es); err != nil {
		return nil, "", fmt.Errorf("decode endpoints: %w", err)
	}
	next := ""
	if out.LastEvaluatedKey != nil && len(es) > 0 {
		next = base64.RawURLEncoding.EncodeToString([]byte(es[len(es)-1].EndpointID))
	}
	return es, next, nil
}

// ErrBadCursor is returned for a pagination cursor this store did not make.
var ErrBadCursor = fmt.Errorf("pagination cursor is not valid")

// EndpointChange is an update of an endpoint's editable fields; nil fields
// are left as they are, and an empty one (Fields) is removed.
type EndpointChange struct {
	URL         *string
	Description *string
	EventTypes  *[]string
	Headers     *map[string]string
	// RateLimit sets the endpoint's requests per second; 0 removes the
	// limit.
	RateLimit *int
	// Target and RoleARN change an AWS destination's ARN and role.
	Target  *string
	RoleARN *string
	// Signatures, SealedSigningKeys and PublicKeys change the endpoint's
	// signature schemes and Ed25519 keys.
	Signatures        *[]string
	SealedSigningKeys *[]string
	PublicKeys        *[]string
	// RetrySchedule and TimeoutSeconds set the endpoint's own retry
	// schedule and request timeout; empty or 0 returns to the stack's.
	RetrySchedule  *[]int
	TimeoutSeconds *int
	// Filter sets the endpoint's payload filter; "" removes it.
	Filter *string
	// Auth sets the endpoint's authentication, its secret sealed; one of
	// no kind removes it.
	Auth *domain.EndpointAuth
	// FailureRateAlert sets the endpoint's failure-rate alert; one with
	// no threshold (the zero value) removes it. Either way the degraded
	// mark goes with the alert it was of: a degraded episode is always of
	// the alert as it is, and the next crossing of the new one raises
	// endpoint.degraded.
	FailureRateAlert *domain.FailureRateAlert
}

// ChangedField is one attribute an EndpointChange writes: Value, or removed
// when Empty.
type ChangedField struct {
	Attr  string
	Value any
	Empty bool
}

// Fields are the attributes c writes, by their stored names.
func (c EndpointChange) Fields() []ChangedField {
	var fs []ChangedField
	str := func(attr string, v *string) {
		if v != nil {
			fs = append(fs, ChangedField{attr, *v, *v == ""})
		}
	}
	strs := func(attr string, v *[]string) {
		if v != nil {
			fs = append(fs, ChangedField{attr, *v, len(*v) == 0})
		}
	}
	num := func(attr string, v *int) {
		if v != nil {
			fs = append(fs, ChangedField{attr, *v, *v == 0})
		}
	}
	if c.URL != nil {
		fs = append(fs, ChangedField{"url", *c.URL, false})
	}
	str("description", c.Description)
	strs("event_types", c.EventTypes)
	if c.Headers != nil {
		fs = append(fs, ChangedField{"headers", *c.Headers, len(*c.Headers) == 0})
	}
	num("rate_limit", c.RateLimit)
	str("target", c.Target)
	str("role_arn", c.RoleARN)
	strs("signatures", c.Signatures)
	strs("sealed_signing_keys", c.SealedSigningKeys)
	strs("public_keys", c.PublicKeys)
	if c.RetrySchedule != nil {
		fs = append(fs, ChangedField{"retry_schedule", *c.RetrySchedule, len(*c.RetrySchedule) == 0})
	}
	num("timeout_seconds", c.TimeoutSeconds)
	str("filter", c.Filter)
	if c.Auth != nil {
		fs = append(fs, ChangedField{"auth", *c.Auth, c.Auth.Kind == ""})
	}
	if c.FailureRateAlert != nil {
		fs = append(fs, ChangedField{"failure_rate_alert", *c.FailureRateAlert, c.FailureRateAlert.ThresholdPercent == 0},
			ChangedField{Attr: attrDegradedSince, Empty: true})
	}
	return fs
}

// UpdateEndpoint applies a change to an existing endpoint and returns it, or
// ErrNotFound. Only the named fields are written, so a concurrent failure
// count or rotation is not lost.
func (s *Store) UpdateEndpoint(ctx context.Context, tenantID, endpointID string, c EndpointChange) (domain.Endpoint, error) {
	update, names, values, err := changeExpression(c, s.Now())
	if err != nil {
		return domain.Endpoint{}, err
	}
	return s.updateEndpointItem(ctx, tenantID, endpointID, &dynamodb.UpdateItemInput{
		UpdateExpression:          aws.String(update),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}, fmt.Errorf("endpoint %s: %w", endpointID, ErrNotFound), fmt.Sprintf("update endpoint %s", endpointID))
}

// updateEndpointItem runs in, an update of one existing endpoint's
// configuration (updateExistingEndpoint; ReturnValues and the revision's
// increment added here), and returns the endpoint
// as written. A failed
// condition answers onConditionFailed; another error is wrapped with action.
func (s *Store) updateEndpointItem(ctx context.Context, tenantID, endpointID string, in *dynamodb.UpdateItemInput, onConditionFailed error, action string) (domain.Endpoint, error) {
	in.ReturnValues = types.ReturnValueAllNew
	// Every such write is a new revision (domain.Endpoint.Revision).
	in.UpdateExpression = aws.String(aws.ToString(in.UpdateExpression) + " ADD revision :revision")
	in.ExpressionAttributeValues[":revision"] = &types.AttributeValueMemberN{Value: "1"}
	out, err := s.updateExistingEndpoint(ctx, tenantID, endpointID, in)
	if isConditionFailed(err) {
		return domain.Endpoint{}, onConditionFailed
	}
	if err != nil {
		return domain.Endpoint{}, fmt.Errorf("%s: %w", action, err)
	}
	var e domain.Endpoint
	if err := attributevalue.UnmarshalMap(out.Attributes, &e); err != nil {
		return domain.Endpoint{}, fmt.Errorf("decode endpoint %s: %w", endpointID, err)
	}
	return e, nil
}

// changeExpression is the update expression, with its names and values, that
// writes c's named fields (an empty one is removed) and updated_at (now).
func changeExpression(c EndpointChange, now time.Time) (update string, names map[string]string, values map[string]types.AttributeValue, err error) {
	set := "SET updated_at = :now"
	values = map[string]types.AttributeValue{":now": timeValue(now)}
	// Every attribute by an alias: url is a reserved word in DynamoDB
	// expressions.
	names = map[string]string{}
	var removed []string
	for _, f := range c.Fields() {
		names["#"+f.Attr] = f.Attr
		if f.Empty {
			removed = append(removed, "#"+f.Attr)
			continue
		}
		av, err := attributevalue.Marshal(f.Value)
		if err != nil {
			return "", nil, nil, fmt.Errorf("marshal endpoint change: %w", err)
		}
		set += ", #" + f.Attr + " = :" + f.Attr
		values[":"+f.Attr] = av
	}
	if len(removed) > 0 {
		set += " REMOVE " + strings.Join(removed, ", ")
	}
	if len(names) == 0 {
		names = nil // DynamoDB refuses an empty map
	}
	return set, names, values, nil
}

// DeleteEndpoint removes an endpoint, or answers ErrNotFound.
func (s *Store) DeleteEndpoint(ctx context.Context, tenantID, endpointID string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: &s.table, Key: endpointKey(tenantID, endpointID),
		ConditionExpression: aws.String("attribute_exists(pk)"),
	})
	if isConditionFailed(err) {
		return fmt.Errorf("endpoint %s: %w", endpointID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete endpoint %s: %w", endpointID, err)
	}
	return nil
}

// Rotation is a new signing secret for RotateSecret.
type Rotation struct {
	// Sealed is the new secret, sealed for the endpoint (package sealing).
	Sealed string
	// Grace is how long the current secret keeps signing beside it.
	Grace time.Duration
	// Seal seals the current secret when the endpoint holds it in
	// plaintext (written before secrets were sealed), so that it retires
	// sealed and no plaintext stays behind. Required for such an endpoint.
	Seal func(ctx context.Context, plaintext string) (string, error)
	// SealedSigningKey, when set, is a new Ed25519 signing key (sealed)
	// and PublicKey its public half: they go first in the endpoint's
	// SealedSigningKeys and PublicKeys, and the current first key retires
	// beside them, signing until the same RetiringUntil as the secret
	// (older ones go). Empty: the keys are left as they are.
	SealedSigningKey, PublicKey string
}

// RotateSecret makes r.Sealed the endpoint's signing secret; the current
// one keeps signing beside it for r.Grace, sealed. A plaintext secret of an
// endpoint written before secrets were sealed is sealed (r.Seal) and
// removed. The write is conditional on the secrets read, so two rotations
// at once cannot lose a secret.
func (s *Store) RotateSecret(ctx context.Context, tenantID, endpointID string, r Rotation) (domain.Endpoint, error) {
	cur, err := s.Endpoint(ctx, tenantID, endpointID)
	if err != nil {
		return domain.Endpoint{}, err
	}
	next, err := attributevalue.Marshal([]string{r.Sealed})
	if err != nil {
		return domain.Endpoint{}, err
	}
	now := s.Now().UTC()
	values := map[string]types.AttributeValue{":next": next, ":until": timeValue(now.Add(r.Grace)), ":now": timeValue(now)}
	retiring, cond := "", "attribute_not_exists(sealed_secrets)"
	switch {
	case len(cur.SealedSecrets) > 0:
		retiring, cond = cur.SealedSecrets[0], "sealed_secrets = :old"
		if values[":old"], err = attributevalue.Marshal(cur.SealedSecrets); err != nil {
			return domain.Endpoint{}, err
		}
	case len(cur.Secrets) > 0:
		if r.Seal == nil {
			return domain.Endpoint{}, fmt.Errorf("rotate secret of endpoint %s: its secret is in plaintext and nothing seals it", endpointID)
		}
		if retiring, err = r.Seal(ctx, cur.Secrets[0]); err != nil {
			return domain.Endpoint{}, fmt.Errorf("rotate secret of endpoint %s: %w", endpointID, err)
		}
		cond += " AND secrets = :old"
		if values[":old"], err = attributevalue.Marshal(cur.Secrets); err != nil {
			return domain.Endpoint{}, err
		}
	}
	set := "SET sealed_secrets = :next, retiring_until = :until, updated_at = :now"
	if set, cond, err = rotateKeys(cur, r, set, cond, values); err != nil {
		return domain.Endpoint{}, err
	}
	remove := " REMOVE secrets, retiring_secret"
	if retiring != "" {
		set += ", sealed_retiring_secret = :retiring"
		values[":retiring"] = &types.AttributeValueMemberS{Value: retiring}
	} else {
		remove += ", sealed_retiring_secret"
	}
	return s.updateEndpointItem(ctx, tenantID, endpointID, &dynamodb.UpdateItemInput{
		UpdateExpression:          aws.String(set + remove),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeValues: values,
	}, fmt.Errorf("endpoint %s changed during rotation, try again: %w", endpointID, ErrConflict),
		fmt.Sprintf("rotate secret of endpoint %s", endpointID))
}

// rotateKeys adds r's Ed25519 key, if any, to a rotation's update: the new
// key first, the current first one retiring after it, conditional on the
// keys read (cur).
func rotateKeys(cur domain.Endpoint, r Rotation, set, cond string, values map[string]types.AttributeValue) (string, string, error) {
	if r.SealedSigningKey == "" {
		return set, cond, nil
	}
	keys, pubs := domain.RotatedKeys(cur, r.SealedSigningKey, r.PublicKey)
	var err error
	if values[":keys"], err = attributevalue.Marshal(keys); err != nil {
		return "", "", err
	}
	if values[":pubs"], err = attributevalue.Marshal(pubs); err != nil {
		return "", "", err
	}
	set += ", sealed_signing_keys = :keys, public_keys = :pubs"
	if len(cur.SealedSigningKeys) == 0 {
		return set, cond + " AND attribute_not_exists(sealed_signing_keys)", nil
	}
	if values[":oldkeys"], err = attributevalue.Marshal(cur.SealedSigningKeys); err != nil {
		return "", "", err
	}
	return set, cond + " AND sealed_signing_keys = :oldkeys", nil
}

// ErrConflict is returned when a concurrent change won.
var ErrConflict = fmt.Errorf("conflicting change")

// SetEndpointEnabled enables (clearing the failure count and its run's
// start, the disabled reason and time, but not the failing mark nor the
// breaker: the next delivery is the breaker's probe, and its success a
// recovery) or disables an endpoint (at now), or answers ErrNotFound.
func (s *Store) SetEndpointEnabled(ctx context.Context, tenantID, endpointID string, enabled bool) (domain.Endpoint, error) {
	expr := "SET disabled = :d, consecutive_failures = :zero, updated_at = :now REMOVE disabled_reason, disabled_at, failures_since"
	values := map[string]types.AttributeValue{
		":d": &types.AttributeValueMemberBOOL{Value: false}, ":zero": &types.AttributeValueMemberN{Value: "0"}, ":now": timeValue(s.Now()),
	}
	if !enabled {
		expr = "SET disabled = :d, disabled_reason = :r, updated_at = :now, disabled_at = :now"
		values = map[string]types.AttributeValue{
			":d": &types.AttributeValueMemberBOOL{Value: true}, ":r": &types.AttributeValueMemberS{Value: string(domain.DisabledByTenant)}, ":now": timeValue(s.Now()),
		}
	}
	return s.updateEndpointItem(ctx, tenantID, endpointID, &dynamodb.UpdateItemInput{
		UpdateExpression:          aws.String(expr),
		ExpressionAttributeValues: values,
	}, fmt.Errorf("endpoint %s: %w", endpointID, ErrNotFound), fmt.Sprintf("set endpoint %s enabled=%t", endpointID, enabled))
}

// DeliveriesOfEvent lists the deliveries of one of a tenant's events to the
// tenant's endpoints, in endpoint id order. No index lists them: a
// delivery's id derives from its event's id and time and its endpoint's
// (domain.DeliveryID), so the ids are computed from the tenant's endpoints
// (one Query, Endpoints) and read from the table with Load (strongly
// consistent, one BatchGetItem per 100), each under both the id and the
// legacy id a version before the time gave it (domain.DeliveryIDs). Those
// that exist are returned.
//
// What this cannot list: a delivery to an endpoint deleted since. It is
// still readable by its id (Delivery), and while it is dead it is still in
// the tenant's DLQ listing (ListDead). A delivery is listed once its
// record exists.
func (s *Store) DeliveriesOfEvent(ctx context.Context, tenantID string, ev domain.Event) ([]domain.Delivery, error) {
	m, err := s.DeliveriesOfEvents(ctx, tenantID, []domain.Event{ev})
	return m[ev.ID], err
}

// DeliveriesOfEvents is DeliveriesOfEvent for several events at once, by
// event id (an event without deliveries has no entry): one Query of the
// tenant's endpoints and one BatchGetItem per 100 of events x endpoints x
// the two ids, which is what bounds a page of the message log.
func (s *Store) DeliveriesOfEvents(ctx context.Context, tenantID string, events []domain.Event) (map[string][]domain.Delivery, error) {
	out := map[string][]domain.Delivery{}
	if len(events) == 0 {
		return out, nil
	}
	eps, err := s.Endpoints(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("list deliveries of %d events: %w", len(events), err)
	}
	if len(eps) == 0 {
		return out, nil
	}
	slices.SortFunc(eps, func(a, b domain.Endpoint) int { return strings.Compare(a.EndpointID, b.EndpointID) })
	pairs := make([][2]string, 0, len(eps)*len(events))
	ids := make([]string, 0, 2*cap(pairs))
	for _, ev := range events {
		for _, ep := range eps {
			both := domain.DeliveryIDs(tenantID, ev.ID, ep.EndpointID, ev.OccurredAt)
			pairs, ids = append(pairs, both), append(ids, both[:]...)
		}
	}
	snap, err := s.Load(ctx, ids, nil)
	if err != nil {
		return nil, fmt.Errorf("read deliveries of %d events: %w", len(events), err)
	}
	for _, both := range pairs {
		// The tenant is checked as the API checks a delivery read by id:
		// a delivery id does not derive from its tenant's.
		if d, ok := FirstFound(snap.Deliveries, both); ok && d.TenantID == tenantID {
			out[d.EventID] = append(out[d.EventID], d)
		}
	}
	return out, nil
}

// FirstFound is the delivery of ids (domain.DeliveryIDs: the id, then the
// legacy id) that deliveries holds, the first one found.
func FirstFound(deliveries map[string]domain.Delivery, ids [2]string) (domain.Delivery, bool) {
	for _, id := range ids {
		if d, ok := deliveries[id]; ok {
			return d, true
		}
	}
	return domain.Delivery{}, false
}

// PutEndpoint creates or replaces an endpoint.
func (s *Store) PutEndpoint(ctx context.Context, e domain.Endpoint) error {
	if e.CreatedAt.IsZero() {
		e.CreatedAt = s.Now().UTC()
	}
	item, err := attributevalue.MarshalMap(e)
	if err != nil {
		return fmt.Errorf("marshal endpoint %s: %w", e.EndpointID, err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: withKey(item, endpointKey(e.TenantID, e.EndpointID))})
	if err != nil {
		return fmt.Errorf("put endpoint %s: %w", e.EndpointID, err)
	}
	return nil
}

// Endpoint reads one endpoint of a tenant, or ErrNotFound.
func (s *Store) Endpoint(ctx context.Context, tenantID, endpointID string) (domain.Endpoint, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: endpointKey(tenantID, endpointID)})
	if err != nil {
		return domain.Endpoint{}, fmt.Errorf("get endpoint %s: %w", endpointID, err)
	}
	if out.Item == nil {
		return domain.Endpoint{}, fmt.Errorf("endpoint %s of tenant %s: %w", endpointID, tenantID, ErrNotFound)
	}
	var e domain.Endpoint
	if err := attributevalue.UnmarshalMap(out.Item, &e); err != nil {
		return domain.Endpoint{}, fmt.Errorf("decode endpoint %s: %w", endpointID, err)
	}
	return e, nil
}

// Endpoints lists every endpoint of a tenant.
func (s *Store) Endpoints(ctx context.Context, tenantID string) ([]domain.Endpoint, error) {
	var out []domain.Endpoint
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:              &s.table,
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: keys.Tenant(tenantID)},
			":sk": &types.AttributeValueMemberS{Value: keys.EndpointPrefix},
		},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list endpoints of tenant %s: %w", tenantID, err)
		}
		var es []domain.Endpoint
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &es); err != nil {
			return nil, fmt.Errorf("decode endpoints of tenant %s: %w", tenantID, err)
		}
		out = append(out, es...)
	}
	return out, nil
}

// TenantEndpoints lists a tenant's endpoints for routing, in one query,
// and reports whether the tenant is being erased (then its endpoints are
// left out: nothing is to be sent to them). Each endpoint holds only what
// routes an event (routingAttributes: its ids, types, filter, whether it
// is disabled, its revision), not its URL, headers, secrets or
// description: what it returns is the tenant's filters and types, about
// 6 KB an endpoint at most, not the 16 KiB an item may hold. What it reads
// (and DynamoDB bills) is bounded by the endpoints_per_tenant cap the API
// holds creates to (maxEndpoints, 100 by default) and the endpoint_bytes
// cap: about 2 MB at most, a few pages. It never cuts the list short: a
// tenant left over a lowered cap still has every endpoint read, as its
// events still go to every one.
// routingProjection and routingNames name the endpoint attributes
// TenantEndpoints reads (domain.Endpoint's tags), each by a placeholder:
// several are DynamoDB reserved words.
var (
	routingProjection = "#pk, #sk, #tenant, #id, #disabled, #types, #filter, #revision"
	routingNames      = map[string]string{
		"#pk": "pk", "#sk": "sk", "#tenant": "tenant_id", "#id": "endpoint_id", "#disabled": "disabled",
		"#types": "event_types", "#filter": "filter", "#revision": "revision",
	}
)

func (s *Store) TenantEndpoints(ctx context.Context, tenantID string) ([]domain.Endpoint, bool, error) {
	var out []domain.Endpoint
	erased := false
	// ENDPOINT#... sorts before ERASED: one range holds both.
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:              &s.table,
		KeyConditionExpression: aws.String("pk = :pk AND sk BETWEEN :from AND :to"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk":   &types.AttributeValueMemberS{Value: keys.Tenant(tenantID)},
			":from": &types.AttributeValueMemberS{Value: keys.EndpointPrefix},
			":to":   &types.AttributeValueMemberS{Value: keys.TombstoneSK},
		},
		ProjectionExpression:     aws.String(routingProjection),
		ExpressionAttributeNames: routingNames,
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, false, fmt.Errorf("list endpoints of tenant %s: %w", tenantID, err)
		}
		for _, item := range page.Items {
			if sk, _ := item["sk"].(*types.AttributeValueMemberS); sk != nil && sk.Value == keys.TombstoneSK {
				erased = true
				continue
			}
			var e domain.Endpoint
			if err := attributevalue.UnmarshalMap(item, &e); err != nil {
				return nil, false, fmt.Errorf("decode endpoints of tenant %s: %w", tenantID, err)
			}
			out = append(out, e)
		}
	}
	if erased {
		return nil, true, nil
	}
	return out, false, nil
}
