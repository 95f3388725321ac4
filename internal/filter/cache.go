package filter

import "sync"

// DefaultCacheSize is how many filters a Cache holds by default.
const DefaultCacheSize = 1024

// Cache keeps parsed filters by their text, so a warm function parses
// each endpoint's filter once, not once per event. The zero value is ready
// to use and safe for concurrent use.
type Cache struct {
	// Size is how many filters it holds; when full it starts again empty.
	// Default DefaultCacheSize (1024).
	Size int
	mu   sync.Mutex
	m    map[string]parsed
}

// parsed is one text's Parse result.
type parsed struct {
	f   *Filter
	err error
}

// Parse is Parse(text), answered from the cache when text was parsed
// before (its error too).
func (c *Cache) Parse(text string) (*Filter, error) {
	c.mu.Lock()
	p, ok := c.m[text]
	c.mu.Unlock()
	if ok {
		return p.f, p.err
	}
	f, err := Parse([]byte(text))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= c.size() {
		c.m = make(map[string]parsed)
	}
	c.m[text] = parsed{f, err}
	return f, err
}

func (c *Cache) size() int {
	if c.Size > 0 {
		return c.Size
	}
	return DefaultCacheSize
}
