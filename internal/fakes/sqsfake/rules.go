package sqsfake

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// The rules below are SQS's as AWS documents them, written here and not
// taken from the product (package message keeps to the same rules as a
// sender): a fake that read the product's limits would agree with a wrong
// one. The conformance suite (package sqstest) holds them to the service.
//
// Sources: Amazon SQS Developer Guide, "Amazon SQS message quotas"; SQS API
// Reference, SendMessage, SendMessageBatch, SendMessageBatchRequestEntry and
// MessageAttributeValue; "Amazon SQS message attributes".
const (
	// MaxEntryIDLen is the longest batch entry id: "up to 80 characters"
	// of alphanumerics, hyphens and underscores (SendMessageBatchRequestEntry.Id).
	MaxEntryIDLen = 80
	// MaxGroupIDLen is the longest MessageGroupId: 128 characters
	// (SendMessage, MessageGroupId).
	MaxGroupIDLen = 128
	// MaxAttributes is the most message attributes a message carries: 10
	// ("Amazon SQS message attributes").
	MaxAttributes = 10
	// MaxAttributeNameLen is the longest attribute name: 256 characters
	// ("Amazon SQS message attributes").
	MaxAttributeNameLen = 256
)

// messageSize is what SQS counts against 256 KiB: the body, and each
// attribute's name, data type and value ("the message size includes the
// message body and the attributes' names, types and values").
func messageSize(body string, attrs map[string]types.MessageAttributeValue) int {
	n := len(body)
	for name, a := range attrs {
		n += len(name) + len(aws.ToString(a.DataType)) + len(aws.ToString(a.StringValue)) + len(a.BinaryValue)
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
	if err := checkText(body); err != nil {
		return err
	}
	if err := checkAttributes(in.MessageAttributes); err != nil {
		return err
	}
	for _, v := range in.MessageAttributes {
		if err := checkText(aws.ToString(v.StringValue)); err != nil {
			return err
		}
	}
	if in.DelaySeconds < 0 || in.DelaySeconds > MaxDelaySeconds {
		return fmt.Errorf("InvalidParameterValue: DelaySeconds %d is not in 0..%d", in.DelaySeconds, MaxDelaySeconds)
	}
	if g := in.MessageGroupId; g != nil && !validGroupID(*g) {
		return fmt.Errorf("InvalidParameterValue: MessageGroupId %q is not 1 to %d ASCII letters, digits or punctuation", *g, MaxGroupIDLen)
	}
	return nil
}

func checkVisibility(v int32) error {
	if v < 0 || v > MaxVisibilitySeconds {
		return fmt.Errorf("InvalidParameterValue: VisibilityTimeout %d is not in 0..%d", v, MaxVisibilitySeconds)
	}
	return nil
}

// checkBatch holds a batch's entry ids to SQS's rules: 1 to
// MaxBatchEntries entries, each id 1 to MaxEntryIDLen of [A-Za-z0-9_-],
// all distinct (SendMessageBatch, DeleteMessageBatch and
// ChangeMessageVisibilityBatch alike).
func checkBatch(ids []*string) error {
	if len(ids) == 0 {
		return errors.New("AWS.SimpleQueueService.EmptyBatchRequest: no entries")
	}
	if len(ids) > MaxBatchEntries {
		return fmt.Errorf("AWS.SimpleQueueService.TooManyEntriesInBatchRequest: %d entries, at most %d", len(ids), MaxBatchEntries)
	}
	seen := map[string]bool{}
	for _, p := range ids {
		id := aws.ToString(p)
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

// validGroupID reports whether SQS accepts s as a MessageGroupId: 1 to
// MaxGroupIDLen characters, each an ASCII letter, digit or punctuation
// (every byte from 0x21 to 0x7E).
func validGroupID(s string) bool {
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

// checkText reports the first character of s that SQS refuses in a message
// ("A message can include only XML, JSON, and unformatted text. The
// following Unicode characters are allowed: #x9 | #xA | #xD | #x20 to
// #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF"), invalid UTF-8 included.
func checkText(s string) error {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n <= 1 {
				return fmt.Errorf("AWS.SimpleQueueService.InvalidMessageContents: invalid UTF-8 at byte %d", i)
			}
		}
		if !allowed(r) {
			return fmt.Errorf("AWS.SimpleQueueService.InvalidMessageContents: character %U at byte %d", r, i)
		}
	}
	return nil
}

func allowed(r rune) bool {
	switch {
	case r == 0x9, r == 0xA, r == 0xD:
		return true
	case r >= 0x20 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

// checkAttributes holds a message's attributes to SQS's rules ("Amazon SQS
// message attributes"): at most MaxAttributes; each name 1 to
// MaxAttributeNameLen of letters, digits, underscore, hyphen and period,
// no period first, last or two in a row, not starting with "AWS." or
// "Amazon." in any case; each of type String, Number or Binary (with an
// optional ".label" custom suffix) and a non-empty value.
func checkAttributes(attrs map[string]types.MessageAttributeValue) error {
	if len(attrs) > MaxAttributes {
		return fmt.Errorf("InvalidParameterValue: %d message attributes, at most %d", len(attrs), MaxAttributes)
	}
	for name, v := range attrs {
		if err := checkAttributeName(name); err != nil {
			return err
		}
		typ, _, _ := strings.Cut(aws.ToString(v.DataType), ".")
		switch {
		case typ != "String" && typ != "Number" && typ != "Binary":
			return fmt.Errorf("InvalidParameterValue: message attribute %q has type %q, not String, Number or Binary", name, aws.ToString(v.DataType))
		case typ == "Binary" && len(v.BinaryValue) == 0, typ != "Binary" && aws.ToString(v.StringValue) == "":
			return fmt.Errorf("InvalidParameterValue: message attribute %q must contain a non-empty value of type %s", name, typ)
		}
	}
	return nil
}

func checkAttributeName(name string) error {
	if name == "" || len(name) > MaxAttributeNameLen {
		return fmt.Errorf("InvalidParameterValue: message attribute name %q is not 1 to %d characters", name, MaxAttributeNameLen)
	}
	low := strings.ToLower(name)
	if strings.HasPrefix(low, "aws.") || strings.HasPrefix(low, "amazon.") {
		return fmt.Errorf("InvalidParameterValue: message attribute name %q starts with a reserved prefix (AWS., Amazon.)", name)
	}
	if name[0] == '.' || name[len(name)-1] == '.' || strings.Contains(name, "..") {
		return fmt.Errorf("InvalidParameterValue: message attribute name %q has a period first, last or twice in a row", name)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Errorf("InvalidParameterValue: message attribute name %q may hold only letters, digits, underscores, hyphens and periods", name)
		}
	}
	return nil
}
