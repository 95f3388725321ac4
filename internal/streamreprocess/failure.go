package streamreprocess

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// FailureRecord is the document Lambda sends to a DynamoDB stream event
// source mapping's on-failure destination when it discards a batch: who
// failed and why, and where the batch's records are. It holds none of the
// records. Sample: events/dynamodb-stream-failure.json.
type FailureRecord struct {
	RequestContext struct {
		RequestID   string `json:"requestId"`
		FunctionARN string `json:"functionArn"`
		// Condition is why Lambda gave up, e.g. RetryAttemptsExhausted
		// (the value AWS documents). Reprocessing does not depend on it.
		Condition              string `json:"condition"`
		ApproximateInvokeCount int    `json:"approximateInvokeCount"`
	} `json:"requestContext"`
	ResponseContext struct {
		StatusCode      int    `json:"statusCode"`
		ExecutedVersion string `json:"executedVersion"`
		FunctionError   string `json:"functionError"`
	} `json:"responseContext"`
	Version   string    `json:"version"`
	Timestamp time.Time `json:"timestamp"`
	Batch     BatchInfo `json:"DDBStreamBatchInfo"`
}

// BatchInfo locates a discarded batch in its stream: its records are those
// of shard ShardID from StartSequenceNumber to EndSequenceNumber, both
// included.
type BatchInfo struct {
	ShardID             string `json:"shardId"`
	StartSequenceNumber string `json:"startSequenceNumber"`
	EndSequenceNumber   string `json:"endSequenceNumber"`
	// FirstArrival and LastArrival are when the first and last records
	// reached the stream (to the second).
	FirstArrival time.Time `json:"approximateArrivalOfFirstRecord"`
	LastArrival  time.Time `json:"approximateArrivalOfLastRecord"`
	// BatchSize is the number of records in the batch.
	BatchSize int    `json:"batchSize"`
	StreamARN string `json:"streamArn"`
}

// ParseFailureRecord reads a message body from the enqueue failure queue. It
// answers an error for anything that does not locate a DynamoDB stream
// batch: such a message is kept for a person to look at.
func ParseFailureRecord(body string) (FailureRecord, error) {
	var r FailureRecord
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return r, fmt.Errorf("not a stream failure record: %w", err)
	}
	b := r.Batch
	var missing []string
	for name, v := range map[string]string{
		"shardId": b.ShardID, "startSequenceNumber": b.StartSequenceNumber,
		"endSequenceNumber": b.EndSequenceNumber, "streamArn": b.StreamARN,
	} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return r, fmt.Errorf("not a DynamoDB stream failure record: DDBStreamBatchInfo lacks %s", strings.Join(missing, ", "))
	}
	if !isSequenceNumber(b.StartSequenceNumber) || !isSequenceNumber(b.EndSequenceNumber) {
		return r, fmt.Errorf("sequence numbers %q and %q are not decimal numbers", b.StartSequenceNumber, b.EndSequenceNumber)
	}
	if compareSequence(b.StartSequenceNumber, b.EndSequenceNumber) > 0 {
		return r, fmt.Errorf("start sequence number %s is after the end %s", b.StartSequenceNumber, b.EndSequenceNumber)
	}
	if !strings.HasPrefix(b.StreamARN, "arn:") || !strings.Contains(b.StreamARN, ":table/") || !strings.Contains(b.StreamARN, "/stream/") {
		return r, fmt.Errorf("streamArn %q is not a DynamoDB stream ARN", b.StreamARN)
	}
	if b.BatchSize < 0 {
		return r, errors.New("batchSize is negative")
	}
	return r, nil
}

// isSequenceNumber reports whether s is a stream sequence number: decimal
// digits (up to 40 in DynamoDB Streams).
func isSequenceNumber(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// compareSequence compares two sequence numbers as the numbers they are
// (they are longer than an int64): -1, 0 or +1.
func compareSequence(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return strings.Compare(a, b)
}
