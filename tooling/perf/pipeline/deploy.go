package pipeline

import (
	"archive/zip"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/outbox"
	"github.com/hookline/hookline/tooling/harness"
)

// Floor is the do-nothing pipeline deployed beside the stack: a table with a
// stream, a queue, and the two floor functions on them, configured as
// hookline's (stream batch 100, SQS batch 10, 256 MB).
type Floor struct {
	Table    string
	QueueURL string
	// QueueMapping is the UUID of the SQS hop's event source mapping, the
	// counterpart of hookline's deliver mapping (its MaximumConcurrency is
	// what the throughput curve sets on both).
	QueueMapping string
	db           *dynamodb.Client
	undo         []func(context.Context) error
}

// DeployFloor creates the floor's resources, named after name, with the
// floor function's bootstrap binary, POSTing to target; Close removes them.
func DeployFloor(ctx context.Context, cfg aws.Config, name, bootstrap, target string) (_ *Floor, err error) {
	zipped, err := zipBootstrap(bootstrap)
	if err != nil {
		return nil, err
	}
	db, q, fn := harness.DynamoDB(cfg), sqs.NewFromConfig(cfg), lambda.NewFromConfig(cfg)
	f := &Floor{Table: name, db: db}
	defer func() {
		if err != nil {
			f.Close(context.WithoutCancel(ctx))
		}
	}()

	tbl, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            &name,
		BillingMode:          ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: ddbtypes.KeyTypeHash}},
		StreamSpecification:  &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: ddbtypes.StreamViewTypeNewImage},
	})
	if err != nil {
		return nil, fmt.Errorf("floor table: %w", err)
	}
	f.undo = append(f.undo, func(ctx context.Context) error {
		_, err := db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &name})
		return err
	})
	streamARN := aws.ToString(tbl.TableDescription.LatestStreamArn)
	if streamARN == "" {
		d, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &name})
		if err != nil {
			return nil, err
		}
		streamARN = aws.ToString(d.Table.LatestStreamArn)
	}

	qo, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &name, Attributes: map[string]string{"VisibilityTimeout": "60"}})
	if err != nil {
		return nil, fmt.Errorf("floor queue: %w", err)
	}
	f.QueueURL = aws.ToString(qo.QueueUrl)
	f.undo = append(f.undo, func(ctx context.Context) error {
		_, err := q.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &f.QueueURL})
		return err
	})
	qa, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &f.QueueURL, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return nil, err
	}
	queueARN := qa.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]

	arch := lambdatypes.ArchitectureX8664
	if runtime.GOARCH == "arm64" {
		arch = lambdatypes.ArchitectureArm64
	}
	create := func(suffix string, env map[string]string, source string, batch int32) error {
		fname := name + "-" + suffix
		_, err := fn.CreateFunction(ctx, &lambda.CreateFunctionInput{
			FunctionName:  &fname,
			Runtime:       lambdatypes.RuntimeProvidedal2023,
			Handler:       aws.String("bootstrap"),
			Architectures: []lambdatypes.Architecture{arch},
			Role:          aws.String("arn:aws:iam::000000000000:role/" + name),
			Code:          &lambdatypes.FunctionCode{ZipFile: zipped},
			MemorySize:    aws.Int32(256),
			Timeout:       aws.Int32(60),
			Environment:   &lambdatypes.Environment{Variables: env},
		})
		if err != nil {
			return fmt.Errorf("floor function %s: %w", fname, err)
		}
		f.undo = append(f.undo, func(ctx context.Context) error {
			_, err := fn.DeleteFunction(ctx, &lambda.DeleteFunctionInput{FunctionName: &fname})
			return err
		})
		in := &lambda.CreateEventSourceMappingInput{FunctionName: &fname, EventSourceArn: &source, BatchSize: aws.Int32(batch), Enabled: aws.Bool(true),
			FunctionResponseTypes: []lambdatypes.FunctionResponseType{lambdatypes.FunctionResponseTypeReportBatchItemFailures}}
		if strings.Contains(source, ":dynamodb:") {
			in.StartingPosition = lambdatypes.EventSourcePositionTrimHorizon
		}
		m, err := fn.CreateEventSourceMapping(ctx, in)
		if err != nil {
			return fmt.Errorf("floor mapping of %s: %w", fname, err)
		}
		f.undo = append(f.undo, func(ctx context.Context) error {
			_, err := fn.DeleteEventSourceMapping(ctx, &lambda.DeleteEventSourceMappingInput{UUID: m.UUID})
			return err
		})
		if suffix == "sqs" {
			f.QueueMapping = aws.ToString(m.UUID)
		}
		return nil
	}
	if err := create("sqs", map[string]string{"FLOOR_MODE": "sqs", "FLOOR_TARGET": target}, queueARN, 10); err != nil {
		return nil, err
	}
	if err := create("stream", map[string]string{"FLOOR_MODE": "stream", "FLOOR_QUEUE_URL": f.QueueURL}, streamARN, 100); err != nil {
		return nil, err
	}
	return f, nil
}

// Write puts items with the given ids into the floor's table, 25 to a
// transaction, as a producer writes its outbox.
func (f *Floor) Write(ctx context.Context, ids []string) error {
	for start := 0; start < len(ids); start += 25 {
		var items []ddbtypes.TransactWriteItem
		for _, id := range ids[start:min(len(ids), start+25)] {
			items = append(items, ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{TableName: &f.Table, Item: map[string]ddbtypes.AttributeValue{
				"id":      &ddbtypes.AttributeValueMemberS{Value: id},
				"payload": &ddbtypes.AttributeValueMemberS{Value: Payload},
			}}})
		}
		if _, err := f.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items}); err != nil {
			return fmt.Errorf("floor write: %w", err)
		}
	}
	return nil
}

// Close removes what DeployFloor created, newest first.
func (f *Floor) Close(ctx context.Context) error {
	var errs []error
	for i := len(f.undo) - 1; i >= 0; i-- {
		errs = append(errs, f.undo[i](ctx))
	}
	return errors.Join(errs...)
}

// Payload is the body of every benchmark event, hookline's and the floor's.
var Payload = func() string {
	b, _ := json.Marshal(map[string]any{"order_id": "ord_0123456789", "amount": 1250, "currency": "eur",
		"customer": map[string]string{"id": "cus_0123456789", "email": "someone@example.com"}, "note": strings.Repeat("x", 120)})
	return string(b)
}()

// Outbox writes hookline events for one tenant into the outbox table, 25 to
// a transaction, as a producer does (package outbox).
type Outbox struct {
	DB       *dynamodb.Client
	Table    string
	TenantID string
	// Type is the events' type; "" is "bench.event".
	Type string
	// Payload is the events' payload; "" is Payload.
	Payload string
}

// Write puts the events.
func (o Outbox) Write(ctx context.Context, ids []string) error {
	now := time.Now()
	for start := 0; start < len(ids); start += 25 {
		var items []ddbtypes.TransactWriteItem
		for _, id := range ids[start:min(len(ids), start+25)] {
			put, err := outbox.TransactPut(o.Table, outbox.Event{ID: id, TenantID: o.TenantID, Type: cmp.Or(o.Type, "bench.event"), Payload: json.RawMessage(cmp.Or(o.Payload, Payload)), OccurredAt: now})
			if err != nil {
				return err
			}
			items = append(items, put)
		}
		if _, err := o.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items}); err != nil {
			return fmt.Errorf("outbox write: %w", err)
		}
	}
	return nil
}

func zipBootstrap(path string) ([]byte, error) {
	bin, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	h := &zip.FileHeader{Name: "bootstrap", Method: zip.Deflate}
	h.SetMode(0o755)
	w, err := zw.CreateHeader(h)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(bin); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
