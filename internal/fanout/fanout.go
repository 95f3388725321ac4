// Package fanout runs independent reads side by side: the queries of a
// sharded key's partitions, whose results the caller merges.
package fanout

import (
	"errors"
	"sync"
)

// Each calls f(i) for every i in [0, n), at most limit at once (limit < 1:
// all at once), and returns their errors joined once all have returned.
// f must be safe to call concurrently.
func Each(n, limit int, f func(i int) error) error {
	if limit < 1 {
		limit = n
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	sem := make(chan struct{}, max(limit, 1))
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = f(i)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
