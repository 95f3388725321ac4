package message

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/outbox"
)

// SQS's limits, as AWS documents them, which the senders keep to (Fits,
// GroupID). The fake SQS of the tests (internal/fakes/sqsfake) writes its
// own from AWS's documentation rather than reading these, so that a wrong
// number here is caught by it, not agreed.
const (
	// MaxBatchEntries is the most entries one batch request holds.
	MaxBatchEntries = 10
	// MaxMessageBytes bounds one message: its body and its message
	// attributes (names, types and values), 256 KiB.
	MaxMessageBytes = 256 << 10
	// MaxBatchBytes bounds the messages of one SendMessageBatch request
	// together, counted as MaxMessageBytes counts one: 256 KiB.
	MaxBatchBytes = 256 << 10
	// MaxEntryIDLen is the longest id of a batch entry.
	MaxEntryIDLen = 80
	// MaxGroupIDLen is SQS's limit on a MessageGroupId: 128 characters.
	MaxGroupIDLen = 128
)

// ValidGroupID reports whether SQS accepts s as a MessageGroupId: 1 to
// MaxGroupIDLen characters, each an ASCII letter, digit or one of
// !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~ (together, every byte from 0x21 to
// 0x7E).
func ValidGroupID(s string) bool {
	if len(s) == 0 || len(s) > MaxGroupIDLen {
		return false
	}
	for i := range len(s) {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// CheckText reports the first character of s that SQS refuses in a message
// (outbox.SQSAllowed), invalid UTF-8 included.
func CheckText(s string) error {
	for i, r := range s {
		if !outbox.SQSAllowed(r) || (r == utf8.RuneError && !validRuneAt(s, i)) {
			return fmt.Errorf("AWS.SimpleQueueService.InvalidMessageContents: character %U at byte %d", r, i)
		}
	}
	return nil
}

// validRuneAt reports whether s holds a valid encoding at byte i (a
// U+FFFD written out is one; a byte range yields U+FFFD as well).
func validRuneAt(s string, i int) bool {
	_, n := utf8.DecodeRuneInString(s[i:])
	return n > 1
}

// CheckEntryIDs holds the entry ids of a batch request (send, delete or
// change visibility) to SQS's rules: 1 to MaxBatchEntries entries, each id
// 1 to MaxEntryIDLen of [A-Za-z0-9_-], all distinct.
func CheckEntryIDs(ids []string) error {
	if len(ids) == 0 {
		return errors.New("AWS.SimpleQueueService.EmptyBatchRequest: no entries")
	}
	if len(ids) > MaxBatchEntries {
		return fmt.Errorf("AWS.SimpleQueueService.TooManyEntriesInBatchRequest: %d entries, at most %d", len(ids), MaxBatchEntries)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if !validEntryID(id) {
			return fmt.Errorf("AWS.SimpleQueueService.InvalidBatchEntryId: entry id %q", id)
		}
		if seen[id] {
			return fmt.Errorf("AWS.SimpleQueueService.BatchEntryIdsNotDistinct: entry id %q", id)
		}
		seen[id] = true
	}
	return nil
}

func validEntryID(id string) bool {
	if len(id) == 0 || len(id) > MaxEntryIDLen {
		return false
	}
	for _, c := range id {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// CheckBatch says what SQS answers to a SendMessageBatch request holding
// entries, where it refuses it: entry ids that break CheckEntryIDs, a body
// with a character SQS refuses (CheckText), or more than MaxBatchBytes in
// all (EntrySize). The fakes of SQS in tests call it, so that every sender
// is held to the same rules as on AWS (the local cloud does not enforce
// them all).
func CheckBatch(entries []sqstypes.SendMessageBatchRequestEntry) error {
	ids := make([]string, len(entries))
	size := 0
	for i, e := range entries {
		ids[i] = aws.ToString(e.Id)
		size += EntrySize(e)
	}
	if err := CheckEntryIDs(ids); err != nil {
		return err
	}
	for _, e := range entries {
		if err := CheckText(aws.ToString(e.MessageBody)); err != nil {
			return fmt.Errorf("entry %q: %w", aws.ToString(e.Id), err)
		}
	}
	if size > MaxBatchBytes {
		return fmt.Errorf("AWS.SimpleQueueService.BatchRequestTooLong: %d bytes, at most %d", size, MaxBatchBytes)
	}
	return nil
}
