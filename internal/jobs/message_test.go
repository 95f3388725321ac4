package jobs_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/stretchr/testify/require"
)

// The messages sent before kinds (a struct of booleans, dispatched in the
// order sweep, recover, gauges, dead_notice, else a step) decode to the
// kind they meant: messages in flight during an upgrade, the schedules'
// inputs and deliver's notices keep working.
func TestLegacyMessagesDecodeToTheirKind(t *testing.T) {
	t.Parallel()
	notice, err := opevent.NoticeBody(opevent.DeadNotice{TenantID: "t", EndpointID: "ep", WindowStart: time.Unix(0, 0).UTC()})
	require.NoError(t, err)
	cases := []struct {
		body string
		want jobs.Kind
	}{
		{`{"job_id":"rj_1"}`, jobs.KindStep},
		{`{}`, jobs.KindStep},
		{`{"sweep":true}`, jobs.KindSweep},
		{`{"sweep":true,"reconcile":true}`, jobs.KindSweepReconcile},
		{`{"reconcile":true}`, jobs.KindStep}, // reconcile meant nothing without sweep
		{`{"recover":true}`, jobs.KindRecover},
		{`{"gauges":true}`, jobs.KindGauges},
		{`{"gauges":true,"tenant_id":"t"}`, jobs.KindGauges},
		{`{"sweep":true,"recover":true,"gauges":true}`, jobs.KindSweep}, // the switch's order
		{`{"recover":true,"gauges":true}`, jobs.KindRecover},
		{notice, jobs.KindDeadNotice},
	}
	for _, c := range cases {
		t.Run(c.body, func(t *testing.T) {
			var m jobs.Message
			require.NoError(t, json.Unmarshal([]byte(c.body), &m))
			require.Equal(t, c.want, m.Kind)
		})
	}
	var m jobs.Message
	require.NoError(t, json.Unmarshal([]byte(`{"gauges":true,"tenant_id":"t"}`), &m))
	require.Equal(t, "t", m.TenantID)
	require.NoError(t, json.Unmarshal([]byte(notice), &m))
	var n opevent.DeadNotice
	require.NoError(t, json.Unmarshal(m.DeadNotice, &n), "the window as opevent wrote it")
	require.Equal(t, "ep", n.EndpointID)
}

// A message with a kind decodes as it was encoded, whatever booleans it
// also carries.
func TestMessagesRoundTrip(t *testing.T) {
	t.Parallel()
	for _, m := range []jobs.Message{
		jobs.Step("rj_1"), {Kind: jobs.KindSweep}, {Kind: jobs.KindSweepReconcile}, {Kind: jobs.KindRecover},
		{Kind: jobs.KindGauges, TenantID: "t"}, {Kind: jobs.KindDeadNotice, DeadNotice: json.RawMessage(`{"tenant_id":"t","endpoint_id":"ep"}`)},
	} {
		b, err := json.Marshal(m)
		require.NoError(t, err)
		var got jobs.Message
		require.NoError(t, json.Unmarshal(b, &got))
		require.Equal(t, m, got, string(b))
	}
	var m jobs.Message
	require.NoError(t, json.Unmarshal([]byte(`{"kind":"gauges","sweep":true}`), &m))
	require.Equal(t, jobs.KindGauges, m.Kind)
	require.Error(t, json.Unmarshal([]byte(`{not json`), &m))
}

// Every default is the value the worker's accessors had.
func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c := jobs.Config{}.WithDefaults()
	require.Equal(t, jobs.Config{MaxOpenJobs: 3, SweepGap: time.Minute, JobIdle: time.Hour, Rate: 10, StepSends: 600, Stale: 15 * time.Minute, DeadWindow: 5 * time.Minute}, c)
	require.Equal(t, 60, jobs.Config{Rate: 1}.WithDefaults().StepSends, "60 s worth at Rate")
	require.Equal(t, 1, jobs.Config{Rate: 0.001}.WithDefaults().StepSends, "at least one")
	require.Equal(t, 7, jobs.Config{StepSends: 7, Rate: -1}.WithDefaults().StepSends)
	require.Equal(t, 10.0, jobs.Config{Rate: -1}.WithDefaults().Rate, "not positive: the default")
}

// An event of the operator's bus, as the stack's rule sends it to the
// operations queue (no kind: EventBridge's envelope), is a notice, its
// body kept whole for the route.
func TestABusEventIsANotice(t *testing.T) {
	t.Parallel()
	body := `{"version":"0","id":"e1","detail-type":"endpoint.failing","source":"hookline","detail":{"id":"hl_1","tenant_id":"acme"}}`
	var m jobs.Message
	require.NoError(t, json.Unmarshal([]byte(body), &m))
	require.Equal(t, jobs.KindNotice, m.Kind)
	require.JSONEq(t, body, string(m.BusEvent))
	var step jobs.Message
	require.NoError(t, json.Unmarshal([]byte(`{"kind":"step","job_id":"rj_1"}`), &step))
	require.Empty(t, step.BusEvent)
}
