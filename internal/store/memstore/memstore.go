package memstore

import (
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// Store is the in-memory store. Build it with New.
type Store struct {
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// DepthSettle is how long a tenant's DLQ depth counter must have stood
	// still before ReconcileDLQDepth recounts it. Default
	// store.DefaultDepthSettle.
	DepthSettle time.Duration

	mu         sync.Mutex
	tenants    map[string]domain.Tenant
	keys       map[string]domain.APIKey     // by hash
	portal     map[string]domain.PortalLink // by hash
	endpoints  map[endpointKey]domain.Endpoint
	deliveries map[string]domain.Delivery
	dead       map[string]deadEntry // delivery id -> its place in the dead index
	logged     map[string]deadEntry // delivery id -> its place in the delivery log (kept after an erasure: listings skip ids with no record)
	windows    map[string]*domain.OpDeliveryDeadEvent
	rejections map[string]domain.Rejection
	jobs       map[string]domain.ReplayJob
	slots      map[string]map[string]bool // tenant -> ids of its open jobs
	depths     map[string]*counter
	sweptAt    *time.Time
	stats      map[statsKey]domain.StatsBucket
	typeStats  map[typeStatsKey]domain.TypeStatsBucket
	rates      map[string]int   // rate window shard ("tenant\x00endpoint\x00second\x00shard") -> slots taken
	rateNext   int              // TakeSlots so far: the shard each tries first
	gates      map[string]*gate // endpoint gate ("tenant\x00endpoint")
	tombstones map[string]bool  // tenants being erased
}

type endpointKey struct{ tenant, endpoint string }

// counter is a tenant's DLQ depth counter.
type counter struct {
	depth, moves int
	movedAt      time.Time
}

// New returns an empty store on the wall clock.
func New() *Store {
	return &Store{
		Now: time.Now, DepthSettle: store.DefaultDepthSettle,
		tenants: map[string]domain.Tenant{}, keys: map[string]domain.APIKey{},
		endpoints: map[endpointKey]domain.Endpoint{}, deliveries: map[string]domain.Delivery{},
		dead: map[string]deadEntry{}, logged: map[string]deadEntry{}, rejections: map[string]domain.Rejection{},
		jobs: map[string]domain.ReplayJob{}, slots: map[string]map[string]bool{},
		depths: map[string]*counter{}, windows: map[string]*domain.OpDeliveryDeadEvent{},
	}
}

func (s *Store) now() time.Time {
	if s.Now == nil {
		return time.Now().UTC()
	}
	return s.Now().UTC()
}

// copyOf is v after a round trip through the DynamoDB attribute encoding,
// as the real store returns what it wrote.
func copyOf[T any](v T) T {
	item, err := attributevalue.MarshalMap(v)
	if err != nil {
		panic(fmt.Sprintf("memstore: marshal %T: %v", v, err))
	}
	var out T
	if err := attributevalue.UnmarshalMap(item, &out); err != nil {
		panic(fmt.Sprintf("memstore: unmarshal %T: %v", v, err))
	}
	return out
}

// stamp is a time as the store writes one from its clock (to the
// nanosecond, UTC).
func stamp(t time.Time) *time.Time {
	t = t.UTC()
	return &t
}

// checkKey refuses, as DynamoDB does (a ValidationException, which the real
// store passes on wrapped by no sentinel), a key over its limits: 2048
// bytes for a partition key, 1024 for a sort key. The local cloud may not
// refuse it; AWS does.
func checkKey(pk, sk string) error {
	if len(pk) > 2048 || len(sk) > 1024 {
		return fmt.Errorf("ValidationException: One or more parameter values were invalid: key size exceeded (partition key %d bytes, sort key %d)", len(pk), len(sk))
	}
	return nil
}
