package message

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/fakes/sqsfake"
	"github.com/stretchr/testify/require"
)

type batchFunc func(*sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error)

func (f batchFunc) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	return f(in)
}

func TestSendBatch(t *testing.T) {
	t.Parallel()
	entries := []sqstypes.SendMessageBatchRequestEntry{{Id: aws.String("a"), MessageBody: aws.String("{}")}}
	calls := 0
	ok := batchFunc(func(in *sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error) {
		calls++
		require.Equal(t, "https://q", *in.QueueUrl)
		return &sqs.SendMessageBatchOutput{}, nil
	})
	require.NoError(t, SendBatch(context.Background(), ok, "https://q", nil))
	require.Zero(t, calls, "nothing to send, no call")
	require.NoError(t, SendBatch(context.Background(), ok, "https://q", entries))
	require.Equal(t, 1, calls)

	partial := batchFunc(func(*sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error) {
		return &sqs.SendMessageBatchOutput{Failed: []sqstypes.BatchResultErrorEntry{{Id: aws.String("a"), Code: aws.String("InternalError"), Message: aws.String("try again")}}}, nil
	})
	require.ErrorContains(t, SendBatch(context.Background(), partial, "https://q", entries), "send delivery message a: InternalError: try again")
	down := batchFunc(func(*sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error) {
		return nil, errors.New("unreachable")
	})
	require.ErrorContains(t, SendBatch(context.Background(), down, "https://q", entries), "unreachable")
}

func TestFits(t *testing.T) {
	t.Parallel()
	entry := func(n int) sqstypes.SendMessageBatchRequestEntry {
		return sqstypes.SendMessageBatchRequestEntry{Id: aws.String("x"), MessageBody: aws.String(strings.Repeat("a", n))}
	}
	var batch []sqstypes.SendMessageBatchRequestEntry
	require.True(t, Fits(batch, entry(MaxBatchBytes+1)), "anything fits an empty batch; SQS judges a single message")
	for range MaxBatchEntries {
		require.True(t, Fits(batch, entry(10)))
		batch = append(batch, entry(10))
	}
	require.False(t, Fits(batch, entry(1)), "ten entries at most")

	batch = []sqstypes.SendMessageBatchRequestEntry{entry(100 << 10), entry(100 << 10)}
	require.True(t, Fits(batch, entry(56<<10)), "exactly 256 KiB fits")
	require.False(t, Fits(batch, entry(56<<10+1)), "one byte more does not")

	withAttr := entry(56 << 10)
	withAttr.MessageAttributes = map[string]sqstypes.MessageAttributeValue{"k": {DataType: aws.String("String"), StringValue: aws.String("v")}}
	require.Equal(t, 56<<10+1+6+1, EntrySize(withAttr), "attributes count: name, type, value")
	require.False(t, Fits(batch, withAttr))
}

func TestCheckBatch(t *testing.T) {
	t.Parallel()
	entry := func(id string, n int) sqstypes.SendMessageBatchRequestEntry {
		return sqstypes.SendMessageBatchRequestEntry{Id: aws.String(id), MessageBody: aws.String(strings.Repeat("a", n))}
	}
	ten := make([]sqstypes.SendMessageBatchRequestEntry, 0, 11)
	for i := range 11 {
		ten = append(ten, entry(string(rune('a'+i)), 1))
	}
	withAttr := entry("b", 128<<10)
	withAttr.MessageAttributes = map[string]sqstypes.MessageAttributeValue{"k": {DataType: aws.String("String"), StringValue: aws.String("v")}}
	cases := []struct {
		name    string
		entries []sqstypes.SendMessageBatchRequestEntry
		refused string // "" when SQS takes it
	}{
		{"one entry", ten[:1], ""},
		{"ten entries", ten[:10], ""},
		{"exactly 256 KiB", []sqstypes.SendMessageBatchRequestEntry{entry("a", 128<<10), entry("b", 128<<10)}, ""},
		{"none", nil, "EmptyBatchRequest"},
		{"eleven entries", ten, "TooManyEntriesInBatchRequest"},
		{"an id of 80 characters", []sqstypes.SendMessageBatchRequestEntry{entry(strings.Repeat("a", 80), 1)}, ""},
		{"an id of 81 characters", []sqstypes.SendMessageBatchRequestEntry{entry(strings.Repeat("a", 81), 1)}, "InvalidBatchEntryId"},
		{"an id with a dot", []sqstypes.SendMessageBatchRequestEntry{entry("a.b", 1)}, "InvalidBatchEntryId"},
		{"an empty id", []sqstypes.SendMessageBatchRequestEntry{entry("", 1)}, "InvalidBatchEntryId"},
		{"repeated id", []sqstypes.SendMessageBatchRequestEntry{entry("a", 1), entry("a", 1)}, "BatchEntryIdsNotDistinct"},
		{"one byte over 256 KiB", []sqstypes.SendMessageBatchRequestEntry{entry("a", 128<<10), entry("b", 128<<10+1)}, "BatchRequestTooLong"},
		{"over by its attributes", []sqstypes.SendMessageBatchRequestEntry{entry("a", 128<<10), withAttr}, "BatchRequestTooLong"},
		{"U+FFFE in a body", []sqstypes.SendMessageBatchRequestEntry{{Id: aws.String("a"), MessageBody: aws.String("{\"x\":\"\ufffe\"}")}}, "InvalidMessageContents"},
		{"NUL in a body", []sqstypes.SendMessageBatchRequestEntry{{Id: aws.String("a"), MessageBody: aws.String("a\x00")}}, "InvalidMessageContents"},
		{"invalid UTF-8 in a body", []sqstypes.SendMessageBatchRequestEntry{{Id: aws.String("a"), MessageBody: aws.String("a\xff")}}, "InvalidMessageContents"},
		{"U+FFFD written out", []sqstypes.SendMessageBatchRequestEntry{{Id: aws.String("a"), MessageBody: aws.String("a\ufffd")}}, ""},
		{"tab, LF, CR, astral characters", []sqstypes.SendMessageBatchRequestEntry{{Id: aws.String("a"), MessageBody: aws.String("\t\n\r\U0001F600\u2603")}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := CheckBatch(c.entries)
			// The fake SQS writes AWS's rules itself, not these, and is
			// held to the service by sqstest: the two agree on every case.
			out, fakeErr := sqsfake.New(sqsfake.Config{}).SendMessageBatch(context.Background(), &sqs.SendMessageBatchInput{QueueUrl: aws.String("https://q"), Entries: c.entries})
			fakeRefused := fakeErr != nil || len(out.Failed) > 0
			if c.refused == "" {
				require.NoError(t, err)
				require.False(t, fakeRefused, "the fake SQS refuses what CheckBatch takes: %v %v", fakeErr, out)
				return
			}
			require.ErrorContains(t, err, c.refused)
			require.True(t, fakeRefused, "the fake SQS takes what CheckBatch refuses")
		})
	}
}
