package store_test

import (
	"testing"
	"time"

	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/storetest"
)

// The store on the fake table passes the conformance suite, as it does on
// the local cloud's table (e2e TestStoreConformance) and as the in-memory
// store does (memstore's TestConformance).
func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, now func() time.Time) storetest.Store {
		s := store.New(store.NewFakeDB(), "state")
		s.Now = now
		return s
	})
}
