package main

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/fault"
	"github.com/hookline/hookline/internal/sealing"
)

// PipelineFunctionsProps configures NewPipelineFunctions.
type PipelineFunctionsProps struct {
	Tables Tables
	Queues DeliveryQueues
	// SecretsKey seals the endpoints' signing secrets; deliver may decrypt
	// with it.
	SecretsKey awskms.IKey
	// Architecture is "arm64" or "x86_64".
	Architecture string
	// AssetDir holds enqueue/bootstrap and deliver/bootstrap.
	AssetDir string
	// DeliverTimeout is the deliver function's timeout.
	DeliverTimeout time.Duration
	// DeliverMaxConcurrency caps the SQS event source mapping.
	DeliverMaxConcurrency int
	// DeliverReservedConcurrency, when non-zero, reserves concurrency.
	DeliverReservedConcurrency int
	// LogLevel of both functions.
	LogLevel string
	// DeliverEnv is added to the deliver function's environment.
	DeliverEnv map[string]string
	// Faults, when set, is the soak test's fault injection (both functions).
	Faults string
}

// PipelineFunctions are the enqueue and deliver functions.
type PipelineFunctions struct {
	Enqueue awslambda.Function
	Deliver awslambda.Function
}

// NewPipelineFunctions creates the enqueue function on the outbox stream and
// the deliver function on the delivery queue, with grants for exactly what
// each does.
func NewPipelineFunctions(scope constructs.Construct, id string, p PipelineFunctionsProps) PipelineFunctions {
	c := constructs.NewConstruct(scope, &id)
	fns := functionDefaults{Architecture: p.Architecture, AssetDir: p.AssetDir, LogLevel: p.LogLevel, StateTable: p.Tables.State}
	newFn := func(name string, timeout time.Duration, env map[string]string) awslambda.Function {
		return fns.new(c, name, timeout, env)
	}

	enqueueEnv := map[string]string{"HOOKLINE_DELIVERY_QUEUE_URL": *p.Queues.Delivery.QueueUrl()}
	if p.Faults != "" {
		enqueueEnv[fault.Env] = p.Faults
	}
	enqueue := newFn("Enqueue", 60*time.Second, enqueueEnv)
	// Endpoints (Query), LoadWith (BatchGetItem), Tenant (GetItem),
	// PutRejection (PutItem); SendMessageBatch is sqs:SendMessage.
	grantTableItems(enqueue, p.Tables.State, "dynamodb:Query", "dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:PutItem")
	p.Queues.Delivery.Grant(enqueue, jsii.String("sqs:SendMessage"))
	enqueue.AddEventSource(awslambdaeventsources.NewDynamoEventSource(p.Tables.Outbox, &awslambdaeventsources.DynamoEventSourceProps{
		StartingPosition:        awslambda.StartingPosition_TRIM_HORIZON,
		BatchSize:               jsii.Number(100),
		BisectBatchOnError:      jsii.Bool(true),
		RetryAttempts:           jsii.Number(10),
		MaxRecordAge:            awscdk.Duration_Hours(jsii.Number(24)),
		ReportBatchItemFailures: jsii.Bool(true),
		OnFailure:               awslambdaeventsources.NewSqsDlq(p.Queues.EnqueueFailures),
	}))

	deliverEnv := map[string]string{
		"HOOKLINE_DLQ_URL":            *p.Queues.DeadLetter.QueueUrl(),
		"HOOKLINE_DELIVERY_QUEUE_URL": *p.Queues.Delivery.QueueUrl(),
		sealing.EnvKeyARN:             *p.SecretsKey.KeyArn(),
	}
	for k, v := range p.DeliverEnv {
		deliverEnv[k] = v
	}
	deliver := newFn("Deliver", p.DeliverTimeout, deliverEnv)
	if p.DeliverReservedConcurrency > 0 {
		deliver.Node().DefaultChild().(awslambda.CfnFunction).SetReservedConcurrentExecutions(jsii.Number(float64(p.DeliverReservedConcurrency)))
	}
	// Load (BatchGetItem), Delivery and Endpoint (GetItem), every write an
	// UpdateItem; the DLQ send; the signing secrets opened. The mapping
	// below grants the delivery queue's consumption, ChangeMessageVisibility
	// included.
	grantTableItems(deliver, p.Tables.State, "dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:UpdateItem")
	p.Queues.DeadLetter.Grant(deliver, jsii.String("sqs:SendMessage"))
	grantSecrets(deliver, p.SecretsKey, "kms:Decrypt")
	deliver.AddEventSource(awslambdaeventsources.NewSqsEventSource(p.Queues.Delivery, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(10),
		ReportBatchItemFailures: jsii.Bool(true),
		MaxConcurrency:          jsii.Number(float64(p.DeliverMaxConcurrency)),
	}))
	return PipelineFunctions{Enqueue: enqueue, Deliver: deliver}
}

// functionDefaults are what every hookline function shares: runtime,
// architecture, memory, JSON logs with a retention, and the state table.
type functionDefaults struct {
	Architecture string
	AssetDir     string
	LogLevel     string
	StateTable   awsdynamodb.Table
}

// new creates a provided.al2023 function from AssetDir/<name in lower case>.
func (d functionDefaults) new(scope constructs.Construct, name string, timeout time.Duration, env map[string]string) awslambda.Function {
	arch := awslambda.Architecture_ARM_64()
	if d.Architecture == "x86_64" {
		arch = awslambda.Architecture_X86_64()
	}
	vars := map[string]*string{
		"HOOKLINE_STATE_TABLE": d.StateTable.TableName(),
		"HOOKLINE_LOG_LEVEL":   jsii.String(d.LogLevel),
	}
	for k, v := range env {
		vars[k] = jsii.String(v)
	}
	logs := awslogs.NewLogGroup(scope, jsii.String(name+"Logs"), &awslogs.LogGroupProps{
		Retention:     awslogs.RetentionDays_ONE_MONTH,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	return awslambda.NewFunction(scope, jsii.String(name), &awslambda.FunctionProps{
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: arch,
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromAsset(jsii.String(filepath.Join(d.AssetDir, strings.ToLower(name))), nil),
		MemorySize:   jsii.Number(256),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(timeout.Seconds())),
		Environment:  &vars,
		LogGroup:     logs,
	})
}
