package store_test

import (
	"testing"
	"time"

	"github.com/hookline/hookline/internal/store/storefake"
	"github.com/hookline/hookline/internal/store/storetest"
)

// The store on the fake table (storefake, as the consumers' unit tests use
// it) passes the conformance suite, as it does on the local cloud's table
// (e2e TestStoreConformance).
func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, now func() time.Time) storetest.Store {
		s := storefake.New()
		s.Now = now
		return s
	})
}
