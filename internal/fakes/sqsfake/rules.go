package sqsfake

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/message"
)

// The rules are package message's, the one definition of each of SQS's
// limits and rules (message.CheckEntryIDs, CheckText, EntrySize,
// ValidGroupID); the fake adds only the ones no sender in hookline keeps
// to by itself (DelaySeconds, VisibilityTimeout).

// messageSize is what SQS counts against 256 KiB: the body, and each
// attribute's name, type and value (message.EntrySize).
func messageSize(body string, attrs map[string]types.MessageAttributeValue) int {
	return message.EntrySize(types.SendMessageBatchRequestEntry{MessageBody: &body, MessageAttributes: attrs})
}

func checkSend(in *sqs.SendMessageInput) error {
	body := aws.ToString(in.MessageBody)
	if body == "" {
		return fmt.Errorf("MissingParameter: MessageBody")
	}
	if n := messageSize(body, in.MessageAttributes); n > MaxMessageBytes {
		return fmt.Errorf("InvalidParameterValue: message of %d bytes, at most %d", n, MaxMessageBytes)
	}
	if err := message.CheckText(body); err != nil {
		return err
	}
	if err := message.CheckAttributes(in.MessageAttributes); err != nil {
		return err
	}
	for _, v := range in.MessageAttributes {
		if err := message.CheckText(aws.ToString(v.StringValue)); err != nil {
			return err
		}
	}
	if in.DelaySeconds < 0 || in.DelaySeconds > MaxDelaySeconds {
		return fmt.Errorf("InvalidParameterValue: DelaySeconds %d is not in 0..900", in.DelaySeconds)
	}
	if g := in.MessageGroupId; g != nil && !message.ValidGroupID(*g) {
		return fmt.Errorf("InvalidParameterValue: MessageGroupId %q is not 1 to %d ASCII letters, digits or punctuation", *g, message.MaxGroupIDLen)
	}
	return nil
}

func checkVisibility(v int32) error {
	if v < 0 || v > MaxVisibilitySeconds {
		return fmt.Errorf("InvalidParameterValue: VisibilityTimeout %d is not in 0..43200", v)
	}
	return nil
}

// checkBatch holds a batch's entry ids to SQS's rules
// (message.CheckEntryIDs).
func checkBatch(ids []*string) error {
	s := make([]string, len(ids))
	for i, p := range ids {
		s[i] = aws.ToString(p)
	}
	return message.CheckEntryIDs(s)
}
