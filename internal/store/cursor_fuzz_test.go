package store

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
)

// cursorListings are the store's listings, each from a cursor, under a
// filter with a time range (the dead and delivery listings check a
// cursor's position against it).
func cursorListings(s *Store) map[string]func(cursor string) error {
	since := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	until := since.Add(24 * time.Hour)
	return map[string]func(string) error{
		"ListEndpoints": func(c string) error { _, _, err := s.ListEndpoints(context.Background(), "t1", 10, c); return err },
		"ListDead": func(c string) error {
			_, _, err := s.ListDead(context.Background(), "t1", domain.DeadFilter{Since: since, Until: until}, 10, c)
			return err
		},
		"ListDeliveries": func(c string) error {
			_, _, err := s.ListDeliveries(context.Background(), "t1", domain.DeliveryFilter{Since: since, Until: until}, 10, c)
			return err
		},
	}
}

// FuzzListingCursors: any cursor, given to any of the store's listings
// on the fake table (which refuses starting keys as DynamoDB does), lists
// or is ErrBadCursor or ErrCursorMismatch (a 400 at the API), never
// another error (a 500).
func FuzzListingCursors(f *testing.F) {
	for _, seed := range []string{"", "x", "AA", "wA", "e30", base64.RawURLEncoding.EncodeToString([]byte("\xff\xfe")),
		EncodeDeadCursor(DeadCursor{SK: "2020-01-01T00:00:00.000000000Z#msg_x", Q: "q"}),
		EncodeDeadCursor(DeadCursor{SK: "", Q: ""}), base64.RawURLEncoding.EncodeToString([]byte("ep_1"))} {
		f.Add(seed)
	}
	s := newTestStore(newFakeDB())
	listings := cursorListings(s)
	f.Fuzz(func(t *testing.T, cursor string) {
		for name, list := range listings {
			if err := list(cursor); err != nil && !errors.Is(err, ErrBadCursor) && !errors.Is(err, ErrCursorMismatch) {
				t.Fatalf("%s from cursor %q: %v", name, cursor, err)
			}
		}
	})
}
