package hookline_test

import (
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/infra/hookline"
)

// Adding hookline to an existing CDK app: a stack of the app's own, its
// producer function granted the outbox write, and hookline's URL as an
// output. The functions are built from source by `go build` at synth time
// (the default Props.Code), so the app's module requires
// github.com/hookline/hookline and names the four functions as tools
// (docs/deploying.md; TestNewAppFromDocs runs that in a module of its own).
func Example_existingApp() {
	out, _ := os.MkdirTemp("", "cdk.out")
	defer os.RemoveAll(out)
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: &out})

	// The user's lines: their stack, their producer, hookline in it.
	stack := awscdk.NewStack(app, jsii.String("Shop"), nil)
	orders := awslambda.NewFunction(stack, jsii.String("Orders"), &awslambda.FunctionProps{
		Runtime: awslambda.Runtime_NODEJS_22_X(), Handler: jsii.String("index.handler"),
		Code: awslambda.Code_FromInline(jsii.String("exports.handler = async () => ({})")),
	})
	hooks, err := hookline.New(stack, "Webhooks", &hookline.Props{AlarmEmail: "oncall@example.com"})
	if err != nil {
		fmt.Println(err)
		return
	}
	hooks.GrantWriteOutbox(orders) // orders writes outbox.TransactPut items in its transactions
	orders.AddEnvironment(jsii.String("OUTBOX_TABLE"), hooks.OutboxTable.TableName(), nil)
	awscdk.NewCfnOutput(stack, jsii.String("WebhooksURL"), &awscdk.CfnOutputProps{Value: hooks.URL})

	assembly := app.Synth(nil)
	fmt.Println(*assembly.GetStackByName(jsii.String("Shop")).StackName())
	// Output: Shop
}
