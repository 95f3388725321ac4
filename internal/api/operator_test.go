package api_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
)

type tenantPage struct {
	Data       []api.TenantDepthView `json:"data"`
	NextCursor string                `json:"next_cursor"`
}

// deadFor records n dead deliveries of tenant, so its DLQ depth is n.
func (e *env) deadFor(tenant string, n int) {
	e.tb.Helper()
	for i := range n {
		d := domain.Delivery{DeliveryID: fmt.Sprintf("d_%s_%d", tenant, i), TenantID: tenant, EndpointID: "ep", EventID: fmt.Sprintf("ev_%s_%d", tenant, i), EventType: "a.b"}
		require.NoError(e.tb, e.store.RecordAttempt(context.Background(), d, domain.Attempt{Number: 1, At: e.clock.Now(), Status: 410}, domain.Outcome{State: domain.StateDead, DeadReason: "gone", Message: "{}"}))
	}
}

func TestAdminTenantsDeepestFirstPageByPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for tenant, n := range map[string]int{"a": 1, "b": 3, "c": 2, "d": 3, "e": 5} {
		e.newTenant(tenant)
		e.deadFor(tenant, n)
	}
	var got []api.TenantDepthView
	cursor, pages := "", 0
	for {
		target := "/v1/admin/tenants?limit=2"
		if cursor != "" {
			target += "&cursor=" + cursor
		}
		rec := e.do("GET", target, operatorKey, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		p := decodeJSON[tenantPage](t, rec)
		require.LessOrEqual(t, len(p.Data), 2)
		got = append(got, p.Data...)
		pages++
		if cursor = p.NextCursor; cursor == "" {
			break
		}
		require.Less(t, pages, 10)
	}
	require.Equal(t, []api.TenantDepthView{{TenantID: "e", DLQDepth: 5}, {TenantID: "b", DLQDepth: 3}, {TenantID: "d", DLQDepth: 3}, {TenantID: "c", DLQDepth: 2}, {TenantID: "a", DLQDepth: 1}}, got)
	require.Equal(t, 3, pages)

	for _, q := range []string{"limit=0", "limit=101", "cursor=%21%21", "cursor=e30"} {
		rec := e.do("GET", "/v1/admin/tenants?"+q, operatorKey, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
	}
	key := e.newTenant("z")
	require.Equal(t, http.StatusUnauthorized, e.do("GET", "/v1/admin/tenants", key, nil).Code, "a tenant key")
}

// fakeAlarms is DescribeAlarms as AWS answers the api function, whose
// grant names the instance's alarm ARNs and not "*": a request that asks
// for composite alarms, or names no AlarmTypes (metric and composite
// alike), is refused with AccessDenied.
type fakeAlarms struct {
	err   error
	pages []*cloudwatch.DescribeAlarmsOutput
	got   []*cloudwatch.DescribeAlarmsInput
}

func (f *fakeAlarms) DescribeAlarms(_ context.Context, in *cloudwatch.DescribeAlarmsInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.DescribeAlarmsOutput, error) {
	c := *in
	f.got = append(f.got, &c)
	if len(in.AlarmTypes) == 0 || slices.Contains(in.AlarmTypes, cwtypes.AlarmTypeCompositeAlarm) {
		return nil, errors.New("AccessDenied: cloudwatch:DescribeAlarms on composite alarms needs a grant on resource *")
	}
	if f.err != nil {
		return nil, f.err
	}
	if len(f.pages) == 0 {
		return &cloudwatch.DescribeAlarmsOutput{}, nil
	}
	out := f.pages[0]
	f.pages = f.pages[1:]
	return out, nil
}

func TestAdminAlarms(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do("GET", "/v1/admin/alarms", operatorKey, nil)
	require.Equal(t, http.StatusOK, rec.Code, "none in ALARM")
	require.Equal(t, `{"data":[]}`+"\n", rec.Body.String())
	e.srv.Alarms = nil
	e.h = e.srv.Handler()
	rec = e.do("GET", "/v1/admin/alarms", operatorKey, nil)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, "no CloudWatch client")
	require.Equal(t, "alarms cannot be read here", detailOf(t, rec))

	at := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	f := &fakeAlarms{pages: []*cloudwatch.DescribeAlarmsOutput{
		{MetricAlarms: []cwtypes.MetricAlarm{{AlarmName: aws.String("Hookline-DLQDepth-1"), StateReason: aws.String("Threshold Crossed"), StateUpdatedTimestamp: &at}}, NextToken: aws.String("p2")},
		{MetricAlarms: []cwtypes.MetricAlarm{{AlarmName: aws.String("Hookline-Any-2"), StateReason: aws.String("<img src=x onerror=alert(1)>"), StateUpdatedTimestamp: &at}}},
	}}
	e.srv.Alarms, e.srv.AlarmNamePrefix = f, "Hookline-"
	e.h = e.srv.Handler()
	rec = e.do("GET", "/v1/admin/alarms", operatorKey, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, `{"data":[{"name":"Hookline-DLQDepth-1","reason":"Threshold Crossed","updated_at":"2026-03-14T15:00:00Z"},{"name":"Hookline-Any-2","reason":"\u003cimg src=x onerror=alert(1)\u003e","updated_at":"2026-03-14T15:00:00Z"}]}`+"\n", rec.Body.String())
	require.Len(t, f.got, 2)
	require.Equal(t, "Hookline-", aws.ToString(f.got[0].AlarmNamePrefix))
	require.Equal(t, cwtypes.StateValueAlarm, f.got[0].StateValue)
	for _, in := range f.got {
		require.Equal(t, []cwtypes.AlarmType{cwtypes.AlarmTypeMetricAlarm}, in.AlarmTypes, "metric alarms only: the grant is scoped to alarm ARNs")
	}
	require.Equal(t, "p2", aws.ToString(f.got[1].NextToken))

	f.err = errors.New("UnknownOperationException")
	rec = e.do("GET", "/v1/admin/alarms", operatorKey, nil)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	require.Equal(t, "alarms cannot be read here", detailOf(t, rec))
}

// With OperatorCaller set (IAM authorization on the operator routes), an
// operator route takes the caller it names and refuses the operator key;
// the tenant routes still take tenant keys.
func TestOperatorCallerReplacesTheOperatorKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("t1")
	e.srv.OperatorCaller = func(r *http.Request) (string, bool) {
		if r.Header.Get("X-Test-Caller") == "" {
			return "", false
		}
		return r.Header.Get("X-Test-Caller"), true
	}
	e.h = e.srv.Handler()

	signed := e.do("GET", "/v1/admin/stats", "", nil, "X-Test-Caller", "arn:aws:iam::111122223333:role/Ops")
	require.Equal(t, http.StatusOK, signed.Code, signed.Body.String())
	require.Contains(t, e.logs.String(), `"key_id":"arn:aws:iam::111122223333:role/Ops"`, "the request log names the caller")

	unsigned := e.do("GET", "/v1/admin/stats", operatorKey, nil)
	require.Equal(t, http.StatusUnauthorized, unsigned.Code, "the operator key no longer reaches the operator routes")
	require.Contains(t, unsigned.Body.String(), "SigV4")

	require.Equal(t, http.StatusOK, e.do("GET", "/v1/endpoints", key, nil).Code, "tenant routes take tenant keys as before")
	require.Equal(t, http.StatusUnauthorized, e.do("GET", "/v1/endpoints", "", nil, "X-Test-Caller", "arn:aws:iam::111122223333:role/Ops").Code,
		"an IAM caller is no tenant")
}
