package deliver

import (
	"container/list"
	"sync"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// endpointCache keeps, in one Lambda instance across its invocations, what
// the batches read of their endpoints' items: the endpoint's record and
// whether its tenant is being erased (its tombstone), each for ttl from
// its read on the handler's clock. It holds at most max endpoints; beyond,
// the one kept longest is dropped. It is safe for concurrent use.
//
// Only what may be a moment old is kept (keepable): an endpoint that is
// disabled or missing, whose messages would go dead by it, is read again,
// strongly consistent, for every batch.
type endpointCache struct {
	now func() time.Time
	ttl time.Duration
	max int

	mu    sync.Mutex
	by    map[store.EndpointRef]*list.Element
	order list.List // of *cachedEndpoint, oldest first
	// written are the endpoints the handler wrote to (forget) and has not
	// read since: their next read is strongly consistent, so that it sees
	// the write (at most max of them; beyond, the next read is eventual).
	written map[store.EndpointRef]bool
}

// cachedEndpoint is one endpoint as read at at.
type cachedEndpoint struct {
	ref      store.EndpointRef
	endpoint domain.Endpoint
	found    bool // the endpoint exists (endpoint is its record)
	erased   bool // its tenant is being erased
	at       time.Time
}

func newEndpointCache(now func() time.Time, ttl time.Duration, max int) *endpointCache {
	return &endpointCache{now: now, ttl: ttl, max: max, by: map[store.EndpointRef]*list.Element{}, written: map[store.EndpointRef]bool{}}
}

// keepable reports whether what was read of an endpoint may be used for
// ttl: its tenant being erased (a tombstone stays for TombstoneTTL, 15
// days), or the endpoint found and enabled.
func keepable(c cachedEndpoint) bool {
	return c.erased || (c.found && !c.endpoint.Disabled)
}

// get returns ref's entry if one younger than ttl is kept.
func (c *endpointCache) get(ref store.EndpointRef) (cachedEndpoint, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.by[ref]
	if !ok {
		return cachedEndpoint{}, false
	}
	e := el.Value.(*cachedEndpoint)
	if age := c.now().Sub(e.at); age >= c.ttl || age < 0 {
		c.remove(el)
		return cachedEndpoint{}, false
	}
	return *e, true
}

// put keeps e (a keepable one; any other is forgotten), read now, as the
// newest entry, dropping the oldest beyond max.
func (c *endpointCache) put(e cachedEndpoint) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.by[e.ref]; ok {
		c.remove(el)
	}
	if !keepable(e) {
		return
	}
	e.at = c.now()
	c.by[e.ref] = c.order.PushBack(&e)
	for c.order.Len() > max(c.max, 1) {
		c.remove(c.order.Front())
	}
}

// forget drops ref's entry: the handler wrote to the endpoint (its health,
// a disable), and reads it again, strongly consistent (wasWritten), rather
// than use what it had.
func (c *endpointCache) forget(ref store.EndpointRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.by[ref]; ok {
		c.remove(el)
	}
	if len(c.written) < max(c.max, 1) {
		c.written[ref] = true
	}
}

// patch applies change to ref's kept copy, the handler having written it
// so, and reports whether there was one to change. Its read's time stays.
func (c *endpointCache) patch(ref store.EndpointRef, change func(*domain.Endpoint)) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.by[ref]
	if !ok {
		return false
	}
	e := el.Value.(*cachedEndpoint)
	if !e.found {
		return false
	}
	change(&e.endpoint)
	return true
}

// wasWritten reports whether the handler wrote to ref since it last read
// it, and clears the mark: the caller reads it now.
func (c *endpointCache) wasWritten(ref store.EndpointRef) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.written[ref]
	delete(c.written, ref)
	return w
}

// len is how many endpoints are kept.
func (c *endpointCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

func (c *endpointCache) remove(el *list.Element) {
	delete(c.by, el.Value.(*cachedEndpoint).ref)
	c.order.Remove(el)
}
