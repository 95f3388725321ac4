package memstore_test

import (
	"testing"
	"time"

	"github.com/hookline/hookline/internal/store/memstore"
	"github.com/hookline/hookline/internal/store/storetest"
)

var _ storetest.Store = (*memstore.Store)(nil)

// The in-memory store passes the conformance suite the real store passes on
// the local cloud (e2e TestStoreConformance).
func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, now func() time.Time) storetest.Store {
		s := memstore.New()
		s.Now = now
		return s
	})
}
