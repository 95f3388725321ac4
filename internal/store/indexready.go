package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"
)

// IndexRetryAfter is what a reader refused by an index that is not ready
// tells its caller to wait before asking again: DynamoDB backfills an
// index added to a table with items at a pace of its own (minutes for a
// small table, hours for a large one), so a short wait, repeated, is the
// honest answer.
const IndexRetryAfter = 30 * time.Second

// IndexNotReadyError is a Query of a global secondary index that DynamoDB
// cannot serve yet: the index is still being created (CREATING, its
// backfill running) or is not on the table at all (a deploy that adds it
// is under way, docs/deploying.md, "Upgrading"). Nothing is wrong with
// the request: the same read succeeds once the index is ACTIVE. The api
// answers it 503 with a Retry-After of IndexRetryAfter, never 500.
type IndexNotReadyError struct {
	// Index is the index's name.
	Index string
	// Message is DynamoDB's own message.
	Message string
}

func (e *IndexNotReadyError) Error() string {
	return fmt.Sprintf("index %s is not ready (still being created): %s", e.Index, e.Message)
}

// indexNotReadyMessages are the fragments of DynamoDB's ValidationException
// messages for a Query of an index it cannot serve: one still backfilling
// ("Cannot read from backfilling global secondary index"), one not (or no
// longer) on the table ("The table does not have the specified index").
var indexNotReadyMessages = []string{
	"backfilling global secondary index",
	"does not have the specified index",
}

// IndexNotReady returns err as an *IndexNotReadyError when it is DynamoDB's
// refusal of a Query of index (a ValidationException naming a backfilling
// or missing index), and err unchanged otherwise.
func IndexNotReady(err error, index string) error {
	if err == nil || index == "" {
		return err
	}
	var already *IndexNotReadyError
	if errors.As(err, &already) {
		return err
	}
	msg := err.Error()
	var api smithy.APIError
	if errors.As(err, &api) {
		if api.ErrorCode() != "ValidationException" {
			return err
		}
		msg = api.ErrorMessage()
	} else if !strings.Contains(msg, "ValidationException") {
		return err
	}
	for _, m := range indexNotReadyMessages {
		if strings.Contains(msg, m) {
			return &IndexNotReadyError{Index: index, Message: msg}
		}
	}
	return err
}

// indexReadiness is the store's DynamoDB with every Query of an index
// whose error says the index is not ready typed as *IndexNotReadyError
// (the many readers of the indexes need no check of their own).
type indexReadiness struct{ DynamoDB }

func (d indexReadiness) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := d.DynamoDB.Query(ctx, in, opts...)
	if err != nil && in.IndexName != nil {
		return out, IndexNotReady(err, aws.ToString(in.IndexName))
	}
	return out, err
}
