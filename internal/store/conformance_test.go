package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/store/storefake"
	"github.com/hookline/hookline/internal/store/storetest"
)

// The store on the fake table (storefake, as the consumers' unit tests use
// it) passes the conformance suite, each case on a table of its own, as it does on the local cloud's table
// (e2e TestStoreConformance).
func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(_ context.Context, _ *testing.T) *storetest.Bundle {
		clock := storetest.NewClock(time.Now().UTC())
		s := storefake.New()
		s.Now = clock.Now
		return &storetest.Bundle{Store: s, Clock: clock}
	})
}
