package store

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hookline/hookline/internal/domain"
)

// The dead-letter listing's pure parts, shared with memstore so that both
// page alike: the index range a filter selects, the fingerprint of the
// query, and the cursor.

// DeadKeyRange is the sort key range of the dead-letter index that f
// selects: every key is a time in sortableFormat, "#", a delivery id.
func DeadKeyRange(f domain.DeadFilter) (lo, hi string, err error) {
	lo, hi = "0", "~" // below and above every digit a key starts with
	if !f.Since.IsZero() {
		if !KeyTime(f.Since) {
			return "", "", fmt.Errorf("since %s: %w", f.Since.Format(time.RFC3339Nano), ErrBadFilter)
		}
		lo = sortableTime(f.Since)
	}
	if !f.Until.IsZero() {
		if !KeyTime(f.Until) {
			return "", "", fmt.Errorf("until %s: %w", f.Until.Format(time.RFC3339Nano), ErrBadFilter)
		}
		hi = sortableTime(f.Until) + "#~"
	}
	if lo > hi {
		return "", "", fmt.Errorf("until is before since: %w", ErrBadFilter)
	}
	return lo, hi, nil
}

// DeadFingerprint names the query f makes, for its cursors.
func DeadFingerprint(f domain.DeadFilter) string {
	key := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return sortableTime(t)
	}
	sum := sha256.Sum256([]byte(strings.Join([]string{f.EndpointID, f.EventType, key(f.Since), key(f.Until)}, "\x00")))
	return base64.RawURLEncoding.EncodeToString(sum[:9])
}

// DeadCursor is a dead-letter listing's cursor: the position (the index
// key of the last delivery returned) and the query it belongs to. Q is
// empty in the cursors made before it was added; they are checked by
// position only.
type DeadCursor struct {
	ID, SK string
	Q      string `json:",omitempty"`
}

// EncodeDeadCursor is the opaque form of c that ListDead returns.
func EncodeDeadCursor(c DeadCursor) string {
	raw, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// DecodeDeadCursor reads a cursor and checks that its position is a key of
// the dead-letter index: a time in sortableFormat, "#", the delivery id.
func DecodeDeadCursor(cursor string) (DeadCursor, error) {
	var c DeadCursor
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(raw) == 0 || json.Unmarshal(raw, &c) != nil || c.ID == "" || len(c.ID) > 256 {
		return c, fmt.Errorf("cursor: %w", ErrBadCursor)
	}
	at, id, ok := strings.Cut(c.SK, "#")
	t, err := time.Parse(sortableFormat, at)
	if !ok || err != nil || sortableTime(t) != at || id != c.ID {
		return c, fmt.Errorf("cursor: %w", ErrBadCursor)
	}
	return c, nil
}
