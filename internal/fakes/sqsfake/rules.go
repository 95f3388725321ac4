package sqsfake

import (
	"fmt"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Allowed reports whether SQS accepts r in a message: #x9 | #xA | #xD |
// #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF.
func Allowed(r rune) bool {
	switch {
	case r == 0x9, r == 0xA, r == 0xD:
		return true
	case r >= 0x20 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

// CheckText reports the first character of s that SQS refuses (invalid
// UTF-8 included).
func CheckText(s string) error {
	for i, r := range s {
		if r == utf8.RuneError || !Allowed(r) {
			if _, n := utf8.DecodeRuneInString(s[i:]); r != utf8.RuneError || n == 1 {
				return fmt.Errorf("InvalidMessageContents: character %U at byte %d", r, i)
			}
		}
	}
	return nil
}

// messageSize is what SQS counts against 256 KiB: the body, and each
// attribute's name, type and value.
func messageSize(body string, attrs map[string]types.MessageAttributeValue) int {
	n := len(body)
	for k, v := range attrs {
		n += len(k) + len(aws.ToString(v.DataType)) + len(aws.ToString(v.StringValue)) + len(v.BinaryValue)
	}
	return n
}

func checkSend(in *sqs.SendMessageInput) error {
	body := aws.ToString(in.MessageBody)
	if body == "" {
		return fmt.Errorf("MissingParameter: MessageBody")
	}
	if n := messageSize(body, in.MessageAttributes); n > MaxMessageBytes {
		return fmt.Errorf("InvalidParameterValue: message of %d bytes, at most %d", n, MaxMessageBytes)
	}
	if err := CheckText(body); err != nil {
		return err
	}
	for _, v := range in.MessageAttributes {
		if err := CheckText(aws.ToString(v.StringValue)); err != nil {
			return err
		}
	}
	if in.DelaySeconds < 0 || in.DelaySeconds > MaxDelaySeconds {
		return fmt.Errorf("InvalidParameterValue: DelaySeconds %d is not in 0..900", in.DelaySeconds)
	}
	if g := in.MessageGroupId; g != nil && !validGroupID(*g) {
		return fmt.Errorf("InvalidParameterValue: MessageGroupId %q is not 1 to %d ASCII letters, digits or punctuation", *g, maxGroupIDLen)
	}
	return nil
}

func validGroupID(s string) bool {
	if len(s) == 0 || len(s) > maxGroupIDLen {
		return false
	}
	for i := range len(s) {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func checkVisibility(v int32) error {
	if v < 0 || v > MaxVisibilitySeconds {
		return fmt.Errorf("InvalidParameterValue: VisibilityTimeout %d is not in 0..43200", v)
	}
	return nil
}

// checkBatch holds a batch's entry ids to SQS's rules: 1 to 10 entries,
// each id [A-Za-z0-9_-]{1,80}, all distinct.
func checkBatch(ids []*string) error {
	if len(ids) == 0 {
		return fmt.Errorf("AWS.SimpleQueueService.EmptyBatchRequest: no entries")
	}
	if len(ids) > MaxBatchEntries {
		return fmt.Errorf("AWS.SimpleQueueService.TooManyEntriesInBatchRequest: %d entries, at most %d", len(ids), MaxBatchEntries)
	}
	seen := map[string]bool{}
	for _, p := range ids {
		id := aws.ToString(p)
		if !validEntryID(id) {
			return fmt.Errorf("AWS.SimpleQueueService.InvalidBatchEntryId: %q", id)
		}
		if seen[id] {
			return fmt.Errorf("AWS.SimpleQueueService.BatchEntryIdsNotDistinct: %q", id)
		}
		seen[id] = true
	}
	return nil
}

func validEntryID(id string) bool {
	if len(id) == 0 || len(id) > 80 {
		return false
	}
	for _, c := range id {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
