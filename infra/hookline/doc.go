// Package hookline is hookline as a CDK construct: reliable outbound
// webhooks (a transactional outbox, a delivery queue with retries and a
// dead-letter queue, signed POSTs, a tenant and operator HTTP API) added
// to a stack of your own CDK app.
//
//	stack := awscdk.NewStack(app, jsii.String("Shop"), nil)
//	hooks, err := hookline.New(stack, "Webhooks", &hookline.Props{
//		AlarmEmail: "oncall@example.com",
//	})
//	if err != nil {
//		return err
//	}
//	hooks.GrantWriteOutbox(ordersFunction) // outbox.TransactPut in its transactions
//	awscdk.NewCfnOutput(stack, jsii.String("WebhooksURL"), &awscdk.CfnOutputProps{Value: hooks.URL})
//
// New returns a *Hookline exposing what an app wires to: the outbox table
// producers write to (GrantWriteOutbox: dynamodb:PutItem, all a producer's
// TransactWriteItems needs for it), the state table, the delivery queue,
// the dead-letter queue, the HTTP API and its URL, the operator key
// (GrantOperatorKeyRead), the alarm topic and alarms, the operator's
// EventBridge bus, the enqueue reprocess policy (GrantEnqueueReprocess) and
// the four functions. It adds no outputs: those are the app's choice.
//
// # Defaults
//
// Every Props field documents its default; the zero value (or nil props)
// deploys on arm64 with the documented retry schedule
// (RetryPolicy: 8 attempts from 0s to 12h apart, ±20% jitter, a 24 h age
// cap), 15 s per POST, https endpoints only, the
// message log on, deliver's SQS mapping capped at 25 concurrent batches
// (docs/capacity.md), reserved concurrency 26 (deliver), 20 (api) and 8
// (replay), an API throttled at 50 requests a second (burst 100), DLQ
// alarms above 100 messages, and no alarm subscription. An invalid field
// is an error from New naming it; New then creates nothing.
//
// # Function code
//
// Props.Code supplies the functions' binaries. The default,
// BuildFromSource(""), runs `go build` for each function
// (github.com/hookline/hookline/functions/<name>, CGO off, linux, the
// chosen architecture, -tags lambda.norpc, -trimpath) at synth time, in
// the directory `cdk` runs the app in: your module, which requires
// hookline because it imports this package. It needs the go command and
// nothing else: no Docker, no CDK bundling (so no Docker fallback either);
// a missing go command or a failed build is an error from New. The
// standalone app of this repository uses CodeFromDir over the binaries
// `make build` writes to dist/<architecture>. Any other source (a release's
// zip in S3) is a Code of your own.
//
// # Several instances
//
// Every physical name but the alarms' is left to CloudFormation, so two
// instances can share a stack or an account. The alarms are named
// "<stack name>.<instance>.<path>", <instance> being the instance's path
// below the stack (alphanumerics only, "Default" left out, or "Default"
// when nothing is left): the console's alarm list (GET /v1/admin/alarms)
// and the alarm topic take the instance's alarms by that prefix, and the
// "." (which no stack name holds) keeps a sibling stack's and a sibling
// instance's apart ("Hooks" and "Hooks2" too). An instance with id
// "Default" gives its resources the logical IDs they would have directly
// in the stack, as the standalone app's does.
package hookline
