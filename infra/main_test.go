package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/infra/hookline"
	"github.com/stretchr/testify/require"
)

// fakeAssets is an asset directory holding a bootstrap for each function.
func fakeAssets(t *testing.T) string {
	t.Helper()
	assets := t.TempDir()
	for _, fn := range []string{"enqueue", "deliver", "api", "replay"} {
		require.NoError(t, os.MkdirAll(filepath.Join(assets, fn), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(assets, fn, "bootstrap"), []byte(fn+" binary"), 0o755))
	}
	return assets
}

// TestAppOutputs: the app's stack carries every output the tooling reads
// (internal/stackoutputs), and its resources keep the logical IDs they had
// before hookline became a construct (the instance's id is "Default"), so
// a deployed stack upgrades in place.
func TestAppOutputs(t *testing.T) {
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
	props, name, err := propsFromContext(func(k string) string {
		return map[string]string{"assetDir": fakeAssets(t)}[k]
	})
	require.NoError(t, err)
	require.NoError(t, newStack(app, name, props))
	stack := app.Node().FindChild(jsii.String("Hookline")).(awscdk.Stack)
	b, err := json.Marshal(assertions.Template_FromStack(stack, nil).ToJSON())
	require.NoError(t, err)
	var tpl struct {
		Outputs   map[string]struct{ Value any }
		Resources map[string]struct{ Type string }
	}
	require.NoError(t, json.Unmarshal(b, &tpl))
	for _, out := range []string{
		"OutboxTableName", "StateTableName", "DeliveryQueueURL", "DeadLetterQueueURL", "DeadLetterQueueARN",
		"EnqueueFailureQueueURL", "EnqueueFunctionName", "EnqueueRedrivePolicyARN", "DeliverFunctionName", "DLQDepthAlarmName",
		"ApiURL", "ApiID", "ApiFunctionName", "ApiAccessLogGroupName", "OperatorKeySecretARN", "SecretsKeyARN",
		"ReplayJobsQueueURL", "ReplayOpsQueueURL", "ReplayFunctionName", "AlarmTopicARN", "OperatorEventBusName",
		"OperatorEventBusARN", "DashboardName", "TenantDLQAlarmName", "MaxReceiveCount",
		"LaneQueueURL", "FanOutQueueURL", "FanOutDeadLetterQueueARN", "DeadLetterArrivalsQueueARN",
	} {
		require.Contains(t, tpl.Outputs, out)
	}
	require.Equal(t, "8", tpl.Outputs["MaxReceiveCount"].Value, "the default schedule's attempts")
	ref := tpl.Outputs["OutboxTableName"].Value.(map[string]any)["Ref"].(string)
	require.True(t, strings.HasPrefix(ref, "TablesOutbox"), "the outbox table's logical ID %s is the one it had before the construct", ref)
	require.Equal(t, "AWS::DynamoDB::Table", tpl.Resources[ref].Type)
}

func TestMissingBinaries(t *testing.T) {
	// The app as `cdk synth` runs it, with the default architecture and
	// asset folder, from a checkout where `make build` has not run.
	t.Chdir(t.TempDir())
	err := run()
	require.EqualError(t, err, "dist/arm64/enqueue/bootstrap is missing: run `make build ARCH=arm64` first (or pass -c assetDir=DIR)")
}

func TestPropsFromContext(t *testing.T) {
	from := func(ctx map[string]string) (*hookline.Props, string, error) {
		return propsFromContext(func(k string) string { return ctx[k] })
	}

	t.Run("empty context: defaults", func(t *testing.T) {
		p, name, err := from(nil)
		require.NoError(t, err)
		require.Equal(t, "Hookline", name)
		require.Empty(t, p.Architecture)
		require.Nil(t, p.Retry.Schedule)
		require.Nil(t, p.AllowCIDRs)
	})
	t.Run("failingAfter, disableAfter and deadNoticeWindow from context", func(t *testing.T) {
		p, _, err := from(map[string]string{"failingAfter": "3", "disableAfter": "6", "deadNoticeWindow": "5s"})
		require.NoError(t, err)
		require.Equal(t, 3, p.FailingAfter)
		require.Equal(t, 5*time.Second, p.DeadNoticeWindow)
		_, _, err = from(map[string]string{"deadNoticeWindow": "soon"})
		require.ErrorContains(t, err, "context deadNoticeWindow")
		p, _, err = from(map[string]string{"payloadRetention": "72h"})
		require.NoError(t, err)
		require.Equal(t, 72*time.Hour, p.PayloadRetention)
		p, _, err = from(map[string]string{"deliveryRetention": "720h", "dlqRetention": "168h"})
		require.NoError(t, err)
		require.Equal(t, 720*time.Hour, p.DeliveryRetention)
		require.Equal(t, 168*time.Hour, p.DLQRetention)
		p, _, err = from(map[string]string{"messageLog": "false"})
		require.NoError(t, err)
		require.True(t, p.DisableMessageLog)
		p, _, err = from(nil)
		require.NoError(t, err)
		require.False(t, p.DisableMessageLog, "the message log is on by default")
		_, _, err = from(map[string]string{"messageLog": "maybe"})
		require.ErrorContains(t, err, "context messageLog")
		p, _, err = from(map[string]string{"consoleFrameAncestors": "'self', https://app.example.com", "portalMinTTL": "1s"})
		require.NoError(t, err)
		require.Equal(t, []string{"'self'", "https://app.example.com"}, p.ConsoleFrameAncestors)
		require.Equal(t, time.Second, p.PortalMinTTL)
		_, _, err = from(map[string]string{"consoleFrameAncestors": "javascript:alert(1)"})
		require.ErrorContains(t, err, "context consoleFrameAncestors")
	})
	t.Run("the endpoints' isolation and the deliver pool from context", func(t *testing.T) {
		p, _, err := from(map[string]string{
			"disableAfterFor": "30s", "breakerCooldown": "1s", "breakerMaxCooldown": "4s", "endpointConcurrency": "2", "deliverMaxConcurrency": "25",
			"tenantConcurrency": "4", "laneMaxConcurrency": "8", "laneAfter": "40",
		})
		require.NoError(t, err)
		require.Equal(t, 8, p.LaneMaxConcurrency)
		require.Equal(t, 40, p.LaneAfter)
		require.Equal(t, 30*time.Second, p.DisableAfterFor)
		require.Equal(t, time.Second, p.BreakerCooldown)
		require.Equal(t, 4*time.Second, p.BreakerMaxCooldown)
		require.Equal(t, 2, p.EndpointConcurrency)
		require.Equal(t, 4, p.TenantConcurrency)
		require.Equal(t, 25, p.DeliverMaxConcurrency)
		p, _, err = from(nil)
		require.NoError(t, err)
		require.Zero(t, p.DisableAfterFor, "unset: the construct's default")
		require.Zero(t, p.EndpointConcurrency)
		require.Zero(t, p.TenantConcurrency)
		require.Zero(t, p.DeliverMaxConcurrency)
		require.Zero(t, p.LaneMaxConcurrency)
		require.Zero(t, p.LaneAfter)
		for key, bad := range map[string]string{
			"disableAfterFor": "5 days", "breakerCooldown": "soon", "breakerMaxCooldown": "10", "endpointConcurrency": "few", "deliverMaxConcurrency": "1.5",
			"tenantConcurrency": "half", "laneMaxConcurrency": "1.5", "laneAfter": "many",
		} {
			_, _, err := from(map[string]string{key: bad})
			require.ErrorContains(t, err, "context "+key, "%s=%s", key, bad)
		}
	})
	t.Run("host maps to the machine architecture", func(t *testing.T) {
		p, _, err := from(map[string]string{"architecture": "host"})
		require.NoError(t, err)
		wantArch := map[string]string{"amd64": "x86_64", "arm64": "arm64"}[runtime.GOARCH]
		if wantArch == "" {
			t.Skipf("no Lambda architecture for GOARCH %s", runtime.GOARCH)
		}
		require.Equal(t, wantArch, p.Architecture)
	})
	t.Run("explicit architecture passes through", func(t *testing.T) {
		p, _, err := from(map[string]string{"architecture": "x86_64", "assetDir": "somewhere", "stackName": "Local"})
		require.NoError(t, err)
		require.Equal(t, "x86_64", p.Architecture)
		require.Equal(t, assetDirCode{dir: "somewhere"}, p.Code)
	})
	t.Run("retrySchedule, maxAge and allowCIDRs parsed", func(t *testing.T) {
		p, name, err := from(map[string]string{
			"retrySchedule": "0s, 5s,1m",
			"maxAge":        "2h",
			"allowCIDRs":    "127.0.0.0/8, 10.0.0.0/8",
			"stackName":     "Local",
		})
		require.NoError(t, err)
		require.Equal(t, "Local", name)
		require.Equal(t, []time.Duration{0, 5 * time.Second, time.Minute}, p.Retry.Schedule)
		require.Equal(t, 2*time.Hour, p.Retry.MaxAge)
		require.Equal(t, []string{"127.0.0.0/8", "10.0.0.0/8"}, p.AllowCIDRs)
		require.Equal(t, 3, p.Retry.Attempts())
	})
	t.Run("invalid retrySchedule names the context key", func(t *testing.T) {
		for _, s := range []string{"0s,13h", "0s,soon", "0s,,5s"} {
			_, _, err := from(map[string]string{"retrySchedule": s})
			require.ErrorContains(t, err, "context retrySchedule")
		}
		_, _, err := from(map[string]string{"retrySchedule": "0s,13h"})
		require.ErrorContains(t, err, "12h")
	})
	t.Run("reserved concurrency and API throttling from context", func(t *testing.T) {
		p, _, err := from(map[string]string{
			"deliverReservedConcurrency": "30", "apiReservedConcurrency": "none", "replayReservedConcurrency": "8",
			"apiRateLimit": "25.5", "apiBurstLimit": "40",
		})
		require.NoError(t, err)
		require.Equal(t, 30, p.DeliverReservedConcurrency)
		require.Equal(t, -1, p.APIReservedConcurrency)
		require.Equal(t, 8, p.ReplayReservedConcurrency)
		require.Equal(t, 25.5, p.APIRateLimit)
		require.Equal(t, 40, p.APIBurstLimit)
		for key, bad := range map[string]string{
			"deliverReservedConcurrency": "0", "apiReservedConcurrency": "lots", "replayReservedConcurrency": "-2",
			"apiRateLimit": "fast", "apiBurstLimit": "1.5",
		} {
			_, _, err := from(map[string]string{key: bad})
			require.ErrorContains(t, err, "context "+key, "%s=%s", key, bad)
		}
	})
	t.Run("adminIAMAuth, keyAdmins and the route throttles from context", func(t *testing.T) {
		p, _, err := from(nil)
		require.NoError(t, err)
		require.False(t, p.AdminIAMAuth, "the operator key by default")
		require.Nil(t, p.KeyAdmins, "the account by default")
		p, _, err = from(map[string]string{
			"adminIAMAuth": "true", "keyAdmins": "arn:aws:iam::111122223333:role/KeyAdmin, arn:aws:iam::111122223333:role/cdk-hnb659fds-cfn-exec-role-111122223333-eu-west-1",
			"apiPublishRateLimit": "200", "apiPublishBurstLimit": "400", "apiAdminRateLimit": "2.5", "apiAdminBurstLimit": "5",
		})
		require.NoError(t, err)
		require.True(t, p.AdminIAMAuth)
		require.Equal(t, []string{"arn:aws:iam::111122223333:role/KeyAdmin", "arn:aws:iam::111122223333:role/cdk-hnb659fds-cfn-exec-role-111122223333-eu-west-1"}, p.KeyAdmins)
		require.Equal(t, 200.0, p.APIPublishRateLimit)
		require.Equal(t, 400, p.APIPublishBurstLimit)
		require.Equal(t, 2.5, p.APIAdminRateLimit)
		require.Equal(t, 5, p.APIAdminBurstLimit)
		for key, bad := range map[string]string{
			"adminIAMAuth": "yes", "apiPublishRateLimit": "fast", "apiPublishBurstLimit": "1.5", "apiAdminRateLimit": "slow", "apiAdminBurstLimit": "x",
		} {
			_, _, err := from(map[string]string{key: bad})
			require.ErrorContains(t, err, "context "+key, "%s=%s", key, bad)
		}
	})
	t.Run("operatorEventsToAlarms: off unless true", func(t *testing.T) {
		p, _, err := from(nil)
		require.NoError(t, err)
		require.False(t, p.OperatorEventsToAlarms)
		p, _, err = from(map[string]string{"operatorEventsToAlarms": "true"})
		require.NoError(t, err)
		require.True(t, p.OperatorEventsToAlarms)
		_, _, err = from(map[string]string{"operatorEventsToAlarms": "yes"})
		require.ErrorContains(t, err, "context operatorEventsToAlarms")
	})
	t.Run("invalid maxAge names the context key", func(t *testing.T) {
		_, _, err := from(map[string]string{"maxAge": "a day"})
		require.ErrorContains(t, err, "context maxAge")
	})
	t.Run("smallAccount: off unless true", func(t *testing.T) {
		p, _, err := from(map[string]string{"smallAccount": "true"})
		require.NoError(t, err)
		require.True(t, p.SmallAccount)
		p, _, err = from(nil)
		require.NoError(t, err)
		require.False(t, p.SmallAccount)
		_, _, err = from(map[string]string{"smallAccount": "yes"})
		require.ErrorContains(t, err, "context smallAccount")
	})
}

// TestReservationsCommand: `go run ./infra reservations` prints, for a cdk
// command line's context values and the context files, what the stack
// reserves, which make deploy's preflight checks against the account.
func TestReservationsCommand(t *testing.T) {
	dir := t.TempDir()
	cdkJSON := filepath.Join(dir, "cdk.json")
	require.NoError(t, os.WriteFile(cdkJSON, []byte(`{"app":"go run ./infra","context":{"@aws-cdk/core:flag":true,"apiReservedConcurrency":"70"}}`), 0o644))
	missing := filepath.Join(dir, "cdk.context.json")
	print := func(args ...string) (Reservations, error) {
		var out strings.Builder
		err := printReservations(&out, args, cdkJSON, missing)
		var r Reservations
		if err == nil {
			require.NoError(t, json.Unmarshal([]byte(out.String()), &r))
		}
		return r, err
	}
	r, err := print("-c", "architecture=arm64", "--require-approval", "never")
	require.NoError(t, err)
	require.Equal(t, Reservations{Stack: "Hookline", Reservations: map[string]int{"deliver": 32, "api": 70, "replay": 8}}, r, "cdk.json's context counts")
	r, err = print("-c", "apiReservedConcurrency=none", "--context=deliverMaxConcurrency=20", "--context", "stackName=Hooks")
	require.NoError(t, err)
	require.Equal(t, Reservations{Stack: "Hooks", Reservations: map[string]int{"deliver": 27, "replay": 8}}, r, "the command line wins: 20 + the lane's 6 + 1")
	r, err = print("-c", "smallAccount=true", "-c", "apiReservedConcurrency=none")
	require.NoError(t, err)
	require.Empty(t, r.Reservations)
	_, err = print("-c", "smallAccount=true")
	require.ErrorContains(t, err, "the small-account profile reserves none", "cdk.json's apiReservedConcurrency 30 with the profile")
	_, err = print("-c", "deliverMaxConcurrency=1")
	require.ErrorContains(t, err, "deliver max concurrency 1")
}

func TestFaultsFromContext(t *testing.T) {
	props, name, err := propsFromContext(func(k string) string {
		return map[string]string{"faults": "deliver_crash:0.01", "deliverTimeout": "20s"}[k]
	})
	require.NoError(t, err)
	require.Equal(t, "Hookline", name)
	require.Equal(t, "deliver_crash:0.01", props.Faults)
	require.Equal(t, 20*time.Second, props.DeliverTimeout)
}
