package store

import (
	"context"
	"errors"
	"fmt"
	"github.com/hookline/hookline/internal/store/keys"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// recorder answers every call as generously as it can (an item found, a
// query page of one item, an update returning a dead delivery), so that a
// method takes its longest path, and records each call.
type recorder struct {
	mu    sync.Mutex
	calls []Call
}

func (r *recorder) record(action string, index *string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := Call{Action: action, Index: index != nil}
	if !slices.Contains(r.calls, c) {
		r.calls = append(r.calls, c)
	}
}

// found is an item that decodes as a tenant, an endpoint (with a plaintext
// secret), an API key, a dead delivery or a job.
func found(k map[string]types.AttributeValue) map[string]types.AttributeValue {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	item := map[string]types.AttributeValue{
		"tenant_id": s("t"), "endpoint_id": s("e"), "key_id": s("k"), "hash": s("h"), "delivery_id": s("d"),
		"state": s(string(domain.StateDead)), "job_id": s("j"), "kind": s("ids"), "status": s("queued"),
		"secrets":   &types.AttributeValueMemberL{Value: []types.AttributeValue{s("whsec_x")}},
		"depth":     &types.AttributeValueMemberN{Value: "1"},
		"open_jobs": &types.AttributeValueMemberSS{Value: []string{"j"}},
		"rows":      s(`{"e":[],"t":[],"r":[]}`), // an outcome page of no rows
	}
	for n, v := range k {
		item[n] = v
	}
	return item
}

// packedID is a delivery id that carries a time: the recorder finds no
// record of it (packed), so a reader goes on to its outcome page.
var packedID = domain.DeliveryID("t", "ev", "e", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))

func packed(k map[string]types.AttributeValue) bool {
	sk, _ := k["sk"].(*types.AttributeValueMemberS)
	return sk != nil && sk.Value == packedID
}

func (r *recorder) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	r.record("GetItem", nil)
	if sk, _ := in.Key["sk"].(*types.AttributeValueMemberS); sk != nil && sk.Value == "ERASED" {
		return &dynamodb.GetItemOutput{}, nil // no tombstone: CreateTenant goes on to write
	}
	if sk, _ := in.Key["sk"].(*types.AttributeValueMemberS); sk != nil && strings.HasPrefix(sk.Value, keys.KeyRefPrefix) {
		return &dynamodb.GetItemOutput{}, nil // no reference (a key of before them): RevokeAPIKey goes on to the index
	}
	if packed(in.Key) {
		return &dynamodb.GetItemOutput{}, nil // no record: Delivery goes on to the outcome pages
	}
	return &dynamodb.GetItemOutput{Item: found(in.Key)}, nil
}

func (r *recorder) BatchGetItem(_ context.Context, in *dynamodb.BatchGetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	r.record("BatchGetItem", nil)
	// Every key found: a delivery of tenant t, say.
	out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{}}
	for table, ka := range in.RequestItems {
		for _, k := range ka.Keys {
			if !packed(k) {
				out.Responses[table] = append(out.Responses[table], found(k))
			}
		}
	}
	return out, nil
}

func (r *recorder) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	r.record("PutItem", nil)
	return &dynamodb.PutItemOutput{}, nil
}

func (r *recorder) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	r.record("UpdateItem", nil)
	return &dynamodb.UpdateItemOutput{Attributes: found(in.Key)}, nil
}

func (r *recorder) DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	r.record("DeleteItem", nil)
	return &dynamodb.DeleteItemOutput{}, nil
}

func (r *recorder) TransactWriteItems(_ context.Context, in *dynamodb.TransactWriteItemsInput, _ ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	// IAM authorizes a transaction by the action of each of its items.
	for _, op := range in.TransactItems {
		switch {
		case op.Put != nil:
			r.record("PutItem", nil)
		case op.Update != nil:
			r.record("UpdateItem", nil)
		case op.Delete != nil:
			r.record("DeleteItem", nil)
		case op.ConditionCheck != nil:
			r.record("ConditionCheckItem", nil)
		}
	}
	return &dynamodb.TransactWriteItemsOutput{}, nil
}

func (r *recorder) BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	r.record("BatchWriteItem", nil)
	return &dynamodb.BatchWriteItemOutput{}, nil
}

func (r *recorder) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	r.record("Query", in.IndexName)
	// Count says two where one item comes: a count query (the depth
	// reconciliation) then finds the counter (1) off, its longest path.
	k := key("TENANT#t", "ENDPOINT#e")
	if pk, ok := in.ExpressionAttributeValues[":pk"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(pk.Value, "STATS#") {
		k = key(pk.Value, "2026-12-01T00:00:00Z") // an hour bucket
	}
	if pk, ok := in.ExpressionAttributeValues[":pk"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(pk.Value, keys.OutcomesPrefix) {
		k = key(pk.Value, "2026-12-01T00:00:00#digest") // an outcome page
	}
	if pk, ok := in.ExpressionAttributeValues[":pk"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(pk.Value, "STATSTYPE#") {
		k = key(pk.Value, "2026-12-01T00:00:00Z#a.b") // an hour and type's item
	}
	return &dynamodb.QueryOutput{Items: []map[string]types.AttributeValue{found(k)}, Count: 2, ScannedCount: 2}, nil
}

// TestCallsListsWhatEachMethodCalls holds Calls to the code: each method,
// run against the recorder, makes exactly the calls Calls lists, and every
// exported method is listed.
func TestCallsListsWhatEachMethodCalls(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	dead := domain.Outcome{State: domain.StateDead, DeadReason: "x", Message: "{}"}
	run := map[string]func(ctx context.Context, s *Store) error{
		"DLQDepths":         func(ctx context.Context, s *Store) error { _, err := s.DLQDepths(ctx); return err },
		"ReconcileDLQDepth": func(ctx context.Context, s *Store) error { _, err := s.ReconcileDLQDepth(ctx, "t"); return err },
		"RecordAttemptIfUnchanged": func(ctx context.Context, s *Store) error {
			return s.RecordAttemptIfUnchanged(ctx, domain.Delivery{DeliveryID: "d", TenantID: "t"}, domain.Attempt{Number: 1, At: now}, dead)
		},
		"CreateJob": func(ctx context.Context, s *Store) error {
			return s.CreateJob(ctx, &domain.Job{JobID: "j", TenantID: "t", Kind: "ids"}, 3)
		},
		"TenantJobs": func(ctx context.Context, s *Store) error { _, err := s.TenantJobs(ctx, "t"); return err },
		"ReleaseJob": func(ctx context.Context, s *Store) error { return s.ReleaseJob(ctx, "t", "j") },
		"IdleJobs":   func(ctx context.Context, s *Store) error { _, err := s.IdleJobs(ctx, now, 10); return err },
		"ClaimSweep": func(ctx context.Context, s *Store) error { _, err := s.ClaimSweep(ctx, time.Minute); return err },
		"CreateEndpoint": func(ctx context.Context, s *Store) error {
			_, err := s.CreateEndpoint(ctx, domain.Endpoint{TenantID: "t", EndpointID: "e"})
			return err
		},
		"ListEndpoints":  func(ctx context.Context, s *Store) error { _, _, err := s.ListEndpoints(ctx, "t", 10, ""); return err },
		"CountEndpoints": func(ctx context.Context, s *Store) error { _, err := s.CountEndpoints(ctx, "t", 10); return err },
		"UpdateEndpoint": func(ctx context.Context, s *Store) error {
			d := "d"
			_, err := s.UpdateEndpoint(ctx, "t", "e", EndpointChange{Description: &d})
			return err
		},
		"DeleteEndpoint": func(ctx context.Context, s *Store) error { return s.DeleteEndpoint(ctx, "t", "e") },
		"PutNotifyEmail": func(ctx context.Context, s *Store) error {
			_, err := s.PutNotifyEmail(ctx, domain.NotifyEmail{TenantID: "t", ID: "n"})
			return err
		},
		"NotifyEmails":      func(ctx context.Context, s *Store) error { _, err := s.NotifyEmails(ctx, "t"); return err },
		"NotifyEmail":       func(ctx context.Context, s *Store) error { _, err := s.NotifyEmail(ctx, "t", "n"); return err },
		"DeleteNotifyEmail": func(ctx context.Context, s *Store) error { return s.DeleteNotifyEmail(ctx, "t", "n") },
		"SetNotifyStatus": func(ctx context.Context, s *Store) error {
			_, err := s.SetNotifyStatus(ctx, "t", "n", domain.NotifyPending, domain.NotifyVerified)
			return err
		},
		"TakeNotices": func(ctx context.Context, s *Store) error { _, err := s.TakeNotices(ctx, "t", now, 1, 20); return err },
		"SetEndpointEnabled": func(ctx context.Context, s *Store) error {
			_, err := s.SetEndpointEnabled(ctx, "t", "e", true)
			return err
		},
		"RotateSecret": func(ctx context.Context, s *Store) error {
			_, err := s.RotateSecret(ctx, "t", "e", Rotation{Sealed: "S", Grace: time.Hour, Seal: func(context.Context, string) (string, error) { return "S0", nil }})
			return err
		},
		"DeliveriesOfEvent": func(ctx context.Context, s *Store) error {
			_, err := s.DeliveriesOfEvent(ctx, "t", domain.Event{ID: "ev"})
			return err
		},
		"RecordResendAttempt": func(ctx context.Context, s *Store) error {
			return s.RecordResendAttempt(ctx, domain.Delivery{DeliveryID: "d", State: domain.StateDelivered}, domain.Attempt{Number: 1})
		},
		"DeliveriesOfEvents": func(ctx context.Context, s *Store) error {
			_, err := s.DeliveriesOfEvents(ctx, "t", []domain.Event{{ID: "ev1"}, {ID: "ev2"}})
			return err
		},
		"Load": func(ctx context.Context, s *Store) error {
			_, err := s.Load(ctx, []string{"d", packedID}, []EndpointRef{{"t", "e"}})
			return err
		},
		"LoadWith": func(ctx context.Context, s *Store) error {
			_, err := s.LoadWith(ctx, LoadOptions{Eventual: true, Packed: true}, []string{"d", packedID}, nil)
			return err
		},
		"ListDeliveries": func(ctx context.Context, s *Store) error {
			_, _, err := s.ListDeliveries(ctx, "t", domain.DeliveryFilter{Class: domain.StatusNetwork}, 10, "")
			return err
		},
		"ListDead": func(ctx context.Context, s *Store) error {
			_, _, err := s.ListDead(ctx, "t", domain.DeadFilter{}, 10, "")
			return err
		},
		"ClaimForReplay": func(ctx context.Context, s *Store) error {
			_, err := claimByID(ctx, s, "d", "t", "j", time.Minute)
			return err
		},
		"ReleaseReplay": func(ctx context.Context, s *Store) error { return s.ReleaseReplay(ctx, []string{"d"}, "j") },
		"SaveJob": func(ctx context.Context, s *Store) error {
			return s.SaveJob(ctx, &domain.Job{JobID: "j", Kind: "ids"})
		},
		"Job": func(ctx context.Context, s *Store) error { _, err := s.Job(ctx, "j"); return err },
		"PutEndpoint": func(ctx context.Context, s *Store) error {
			return s.PutEndpoint(ctx, domain.Endpoint{TenantID: "t", EndpointID: "e"})
		},
		"Endpoint":  func(ctx context.Context, s *Store) error { _, err := s.Endpoint(ctx, "t", "e"); return err },
		"Endpoints": func(ctx context.Context, s *Store) error { _, err := s.Endpoints(ctx, "t"); return err },
		"Delivery": func(ctx context.Context, s *Store) error {
			if _, err := s.Delivery(ctx, packedID); !errors.Is(err, ErrNotFound) {
				return fmt.Errorf("a delivery of no record and no row: %v", err)
			}
			return nil
		},
		"RecordAttempt": func(ctx context.Context, s *Store) error {
			return s.RecordAttempt(ctx, domain.Delivery{DeliveryID: "d", TenantID: "t"}, domain.Attempt{Number: 1, At: now}, dead)
		},
		"RecordFirstAttempts": func(ctx context.Context, s *Store) error {
			_, err := s.RecordFirstAttempts(ctx, []FirstAttempt{{Delivery: domain.Delivery{DeliveryID: packedID, TenantID: "t"}, Attempt: domain.Attempt{Number: 1, At: now, Status: 200}}})
			return err
		},
		"CancelDelivery": func(ctx context.Context, s *Store) error {
			_, _, err := s.CancelDelivery(ctx, domain.Delivery{DeliveryID: "d", TenantID: "t"}, "j", now)
			return err
		},
		"MarkDeadBeforeLastAttempt": func(ctx context.Context, s *Store) error {
			return s.MarkDeadBeforeLastAttempt(ctx, domain.Delivery{DeliveryID: "d", TenantID: "t"}, "x", "{}", now)
		},
		"PutRejection": func(ctx context.Context, s *Store) error {
			return s.PutRejection(ctx, domain.Rejection{Key: "k", TenantID: "t"})
		},
		"Rejection":       func(ctx context.Context, s *Store) error { _, err := s.Rejection(ctx, "k"); return err },
		"DisableEndpoint": func(ctx context.Context, s *Store) error { _, err := s.DisableEndpoint(ctx, "t", "e", "r"); return err },
		"RecordEndpointHealth": func(ctx context.Context, s *Store) error {
			_, err := s.RecordEndpointHealth(ctx, "t", "e", true, 1, HealthThresholds{FailingAfter: 1, DisableAfter: 2})
			return err
		},
		"MarkEndpointDegraded": func(ctx context.Context, s *Store) error {
			_, err := s.MarkEndpointDegraded(ctx, "t", "e", true)
			return err
		},
		"AddDeath": func(ctx context.Context, s *Store) error {
			_, err := s.AddDeath(ctx, "t", "e", now, now.Add(time.Minute), domain.OpDeath{DeliveryID: "d", Reason: "x"})
			return err
		},
		"DeadWindow": func(ctx context.Context, s *Store) error { _, err := s.DeadWindow(ctx, "t", "e", now); return err },
		"CreateTenant": func(ctx context.Context, s *Store) error {
			_, err := s.CreateTenant(ctx, domain.Tenant{TenantID: "t"})
			return err
		},
		"Tenant": func(ctx context.Context, s *Store) error { _, err := s.Tenant(ctx, "t"); return err },
		"PutAPIKey": func(ctx context.Context, s *Store) error {
			_, err := s.PutAPIKey(ctx, domain.APIKey{KeyID: "k", TenantID: "t", Hash: "h"})
			return err
		},
		"TenantForKey": func(ctx context.Context, s *Store) error { _, err := s.TenantForKey(ctx, "h"); return err },
		"RevokeAPIKey": func(ctx context.Context, s *Store) error { return s.RevokeAPIKey(ctx, "t", "k") },
		"TakeAPIRequest": func(ctx context.Context, s *Store) error {
			_, err := s.TakeAPIRequest(ctx, "t", now, 5)
			return err
		},
		"PutPortalLink": func(ctx context.Context, s *Store) error {
			_, err := s.PutPortalLink(ctx, domain.PortalLink{LinkID: "pl", TenantID: "t", Hash: "h"})
			return err
		},
		"PortalLink":       func(ctx context.Context, s *Store) error { _, err := s.PortalLink(ctx, "h"); return err },
		"RevokePortalLink": func(ctx context.Context, s *Store) error { return s.RevokePortalLink(ctx, "t", "pl") },
		"TakeGate": func(ctx context.Context, s *Store) error {
			_, _, err := s.TakeGate(ctx, "t", "e", GateAsk{Slots: 3, Fast: 10, Start: 5, Now: now, Until: now.Add(time.Second)})
			return err
		},
		"MarkGate": func(ctx context.Context, s *Store) error {
			return s.MarkGate(ctx, "t", "e", &now)
		},
		"ReleaseGate": func(ctx context.Context, s *Store) error {
			return s.ReleaseGate(ctx, "t", "e", Hold{Slot: 1, Until: now}, &now)
		},
		"TakeSlots": func(ctx context.Context, s *Store) error {
			_, err := s.TakeSlots(ctx, "t", "e", now, 3, 10)
			return err
		},
		"AddEndpointStats": func(ctx context.Context, s *Store) error {
			return s.AddEndpointStats(ctx, "t", "e", now, domain.AttemptStats{Attempts: 1, Delivered: 1})
		},
		"EndpointStats": func(ctx context.Context, s *Store) error {
			_, err := s.EndpointStats(ctx, "t", "e", now.Add(-time.Hour), now)
			return err
		},
		"AddEndpointTypeStats": func(ctx context.Context, s *Store) error {
			return s.AddEndpointTypeStats(ctx, "t", "e", "a.b", now, domain.AttemptStats{Attempts: 1, Delivered: 1})
		},
		"EndpointTypeStats": func(ctx context.Context, s *Store) error {
			_, err := s.EndpointTypeStats(ctx, "t", "e", now.Add(-time.Hour), now)
			return err
		},
		"LastAttempts": func(ctx context.Context, s *Store) error { _, _, err := s.LastAttempts(ctx, "t", "e"); return err },
		"Tombstone":    func(ctx context.Context, s *Store) error { return s.Tombstone(ctx, "t") },
		"Erased":       func(ctx context.Context, s *Store) error { _, err := s.Erased(ctx, "t"); return err },
		"TenantEndpoints": func(ctx context.Context, s *Store) error {
			_, _, err := s.TenantEndpoints(ctx, "t")
			return err
		},
		"EraseIndexed": func(ctx context.Context, s *Store) error {
			_, _, err := s.EraseIndexed(ctx, "t", domain.EraseJobs, 10)
			if err == nil { // deliveries: the delivery log's index and the tenant's shards of records
				_, _, err = s.EraseIndexed(ctx, "t", domain.EraseDeliveries, 100)
			}
			return err
		},
		"EraseDeliveries": func(ctx context.Context, s *Store) error {
			_, err := s.EraseDeliveries(ctx, "t", []string{"d"})
			return err
		},
		"EraseStats": func(ctx context.Context, s *Store) error { _, _, err := s.EraseStats(ctx, "t", "e", 10); return err },
		"EraseTenantItems": func(ctx context.Context, s *Store) error {
			_, _, err := s.EraseTenantItems(ctx, "t", 10)
			return err
		},
	}

	var methods []string
	typ := reflect.TypeOf(&Store{})
	for i := range typ.NumMethod() {
		methods = append(methods, typ.Method(i).Name)
	}
	require.ElementsMatch(t, methods, slices.Collect(maps.Keys(Calls)), "every exported Store method is in Calls, and nothing else")
	require.ElementsMatch(t, methods, slices.Collect(maps.Keys(run)), "every exported Store method is run here")

	for name, f := range run {
		t.Run(name, func(t *testing.T) {
			r := &recorder{}
			s := New(r, "state")
			s.Now = func() time.Time { return now }
			require.NoError(t, f(context.Background(), s))
			require.ElementsMatch(t, Calls[name], r.calls)
		})
	}
}
