package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files from the code's current behaviour")

// goldenContexts are context sets whose parsed props, stack name, errors
// and reservations testdata/context.golden.json holds, as the hand-written
// parser of before the settings table produced them: the table must parse
// every one of them the same.
var goldenContexts = []map[string]string{
	{},
	{"architecture": "x86_64", "assetDir": "dist/x", "stackName": "Local", "retrySchedule": "0s,5s,1m", "retryJitter": "full", "maxAge": "2h",
		"requestTimeout": "10s", "replayRate": "2.5", "disableAfter": "7", "failingAfter": "3", "deadNoticeWindow": "30s",
		"payloadRetention": "72h", "consoleFrameAncestors": "'self', https://app.example.com", "portalMinTTL": "1s",
		"deliveryRetention": "720h", "dlqRetention": "168h", "messageLog": "false", "allowCIDRs": "127.0.0.0/8, 10.0.0.0/8", "allowHTTP": "true"},
	{"disableAfterFor": "30s", "breakerCooldown": "1s", "breakerMaxCooldown": "4s", "endpointConcurrency": "2",
		"alarmEmail": "ops@example.com", "faults": "deliver_crash:0.01", "operatorEventsToAlarms": "true", "sweepInterval": "2m",
		"deliverTimeout": "30s", "tenantDLQAlarm": "7", "deliverMaxConcurrency": "25", "deliverReservedConcurrency": "30", "laneMaxConcurrency": "4",
		"apiReservedConcurrency": "none", "replayReservedConcurrency": "9", "apiRateLimit": "25.5", "apiBurstLimit": "40"},
	{"adminIAMAuth": "true", "keyAdmins": "arn:aws:iam::111122223333:role/A, arn:aws:iam::111122223333:role/B",
		"apiPublishRateLimit": "200", "apiPublishBurstLimit": "400", "apiAdminRateLimit": "2.5", "apiAdminBurstLimit": "5",
		"apiTenantExpensiveRate": "3", "apiExpensiveBudget": "3s"},
	{"smallAccount": "true", "messageLog": "1", "allowHTTP": "false", "retryJitter": "none", "messageLogLegacyIndex": "false"},
	{"smallAccount": "true", "deliverMaxConcurrency": "3", "apiReservedConcurrency": "none"},
	{"smallAccount": "true", "apiReservedConcurrency": "20"},
	{"deliverMaxConcurrency": "1"},
	{"laneAfter": "40", "laneMaxConcurrency": "10"}, {"laneMaxConcurrency": "1"}, {"laneMaxConcurrency": "few"}, {"laneAfter": "-1"}, {"laneAfter": "x"},
	{"deliverMaxConcurrency": "25", "deliverReservedConcurrency": "31"},
	{"retrySchedule": "0s,13h"}, {"retrySchedule": "0s,,5s"}, {"retryJitter": "wild"}, {"maxAge": "a day"},
	{"requestTimeout": "15"}, {"replayRate": "fast"}, {"disableAfter": "1.5"}, {"failingAfter": "x"},
	{"apiTenantExpensiveRate": "few"}, {"apiExpensiveBudget": "soon"}, {"apiTenantExpensiveRate": "60", "apiExpensiveBudget": "1s"},
	{"deadNoticeWindow": "soon"}, {"payloadRetention": "2 days"}, {"consoleFrameAncestors": "javascript:alert(1)"},
	{"portalMinTTL": "1"}, {"deliveryRetention": "x"}, {"dlqRetention": "x"}, {"messageLog": "maybe"}, {"messageLogLegacyIndex": "maybe"},
	{"allowHTTP": "yes"}, {"disableAfterFor": "5 days"}, {"breakerCooldown": "soon"}, {"breakerMaxCooldown": "10"},
	{"endpointConcurrency": "few"}, {"tenantConcurrency": "4"}, {"tenantConcurrency": "few"}, {"operatorEventsToAlarms": "yes"}, {"sweepInterval": "often"}, {"deliverTimeout": "x"},
	{"tenantDLQAlarm": "0"}, {"tenantDLQAlarm": "many"}, {"deliverMaxConcurrency": "1.5"}, {"smallAccount": "yes"},
	{"deliverReservedConcurrency": "0"}, {"apiReservedConcurrency": "lots"}, {"replayReservedConcurrency": "-2"},
	{"apiRateLimit": "fast"}, {"apiBurstLimit": "1.5"}, {"adminIAMAuth": "yes"}, {"apiPublishRateLimit": "fast"},
	{"apiPublishBurstLimit": "1.5"}, {"apiAdminRateLimit": "slow"}, {"apiAdminBurstLimit": "x"},
	{"enqueueParallelization": "10", "enqueueSendConcurrency": "1"}, {"enqueueParallelization": "11"},
	{"enqueueSendConcurrency": "0"}, {"enqueueParallelization": "two"}, {"enqueueSendConcurrency": "1.5"},
	{"batchingWindow": "1s"}, {"batchingWindow": "1.5s"}, {"batchingWindow": "soon"}, {"batchingWindow": "301s"},
	{"notifyFrom": "alerts@hookline.example"}, {"notifyFrom": "alerts@hookline.example", "notifyIdentity": "alerts@hookline.example", "notifyConfigurationSet": "hookline"},
	{"notifyFrom": "Alerts <alerts@hookline.example>"}, {"notifyFrom": "alerts@hookline.example", "notifyIdentity": "other.example"}, {"notifyIdentity": "hookline.example"},
	{"staticEgressAZs": "2"}, {"staticEgressAZs": "3", "allowCIDRs": "10.0.0.0/8"}, {"staticEgressAZs": "4"}, {"staticEgressAZs": "two"}, {"staticEgressAZs": "-1"},
	{"destinationRegions": "eu-west-1, eu-central-1", "destinationRoles": "arn:aws:iam::111122223333:role/hookline-*", "destinationOwnAccount": "true"},
	{"destinationRegions": "Europe"}, {"destinationRoles": "arn:aws:sqs:eu-west-1:111122223333:q"}, {"destinationOwnAccount": "yes"},
	{"destinationRoleProbe": "false"}, {"destinationRoleProbe": "no"},
	{"maxRequestTimeout": "40s"}, {"maxRequestTimeout": "x"}, {"requestTimeout": "20s", "maxRequestTimeout": "10s"},
	{"maxEndpoints": "5", "maxEndpointBytes": "9000", "maxMetricsEventTypes": "3"},
	{"maxEndpoints": "many"}, {"maxEndpointBytes": "1.5"}, {"maxMetricsEventTypes": "x"},
	{"maxEndpoints": "0"}, {"maxEndpointBytes": "100"}, {"maxMetricsEventTypes": "-1"},
	{"apiRequestDuration": "60ms", "apiPublishRateLimit": "250"}, {"apiRequestDuration": "fast"}, {"apiRequestDuration": "30s"},
	{"apiPublishRateLimit": "1000", "apiPublishBurstLimit": "2000"}, {"apiPublishRateLimit": "1000", "apiReservedConcurrency": "108"},
	{"eventTypesDir": "testdata/eventtypes/good"}, {"eventTypesDir": "testdata/eventtypes/bad"}, {"eventTypesDir": "testdata/nowhere"},
}

// goldenResult is what one context set gives: the props (%#v), the stack
// name, or the error; and the reservations command's output, or its error.
type goldenResult struct {
	Context      map[string]string `json:"context"`
	Props        string            `json:"props,omitempty"`
	Stack        string            `json:"stack,omitempty"`
	Error        string            `json:"error,omitempty"`
	Reservations string            `json:"reservations"`
}

func goldenOf(t *testing.T, ctx map[string]string) goldenResult {
	t.Helper()
	r := goldenResult{Context: ctx}
	if p, name, err := propsFromContext(func(k string) string { return ctx[k] }); err != nil {
		r.Error = err.Error()
	} else {
		r.Props, r.Stack = fmt.Sprintf("%#v", *p), name
	}
	keys := make([]string, 0, len(ctx))
	for k := range ctx {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var args []string
	for _, k := range keys {
		args = append(args, "-c", k+"="+ctx[k])
	}
	var out strings.Builder
	if err := printReservations(&out, args); err != nil {
		r.Reservations = "error: " + err.Error()
	} else {
		r.Reservations = out.String()
	}
	return r
}

// TestContextGolden: the context sets of goldenContexts parse, and the
// reservations command prints, what they did before the settings table
// (testdata/context.golden.json; -update rewrites it).
func TestContextGolden(t *testing.T) {
	var got []goldenResult
	for _, ctx := range goldenContexts {
		got = append(got, goldenOf(t, ctx))
	}
	path := filepath.Join("testdata", "context.golden.json")
	if *update {
		b, err := json.MarshalIndent(got, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var want []goldenResult
	require.NoError(t, json.Unmarshal(b, &want))
	require.Equal(t, want, got)
}
