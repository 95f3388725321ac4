package api

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
)

// TenantDepthView is one tenant of GET /v1/admin/tenants.
type TenantDepthView struct {
	TenantID string `json:"tenant_id"`
	DLQDepth int    `json:"dlq_depth"`
}

// tenantCursor is the last tenant of a page of GET /v1/admin/tenants: the
// next page starts after it in the order (deepest first, then by id), so a
// depth that changes between pages moves a tenant, never repeats the page.
type tenantCursor struct {
	Depth  int    `json:"d"`
	Tenant string `json:"t"`
}

// listTenants lists the tenants that have a DLQ depth counter (every tenant
// that has had a dead delivery: the counters' index is the only list of
// tenants that needs no scan), deepest first, a page at a time.
func (s *Server) listTenants(w http.ResponseWriter, r *http.Request, _ string) *Problem {
	limit, cursor, errs := pageParams(r)
	var after *tenantCursor
	if c := cursor; c != "" {
		after = &tenantCursor{}
		b, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil || len(c) > 2*maxIDBytes || json.Unmarshal(b, after) != nil || after.Tenant == "" {
			errs = append(errs, FieldError{Field: "cursor", Message: "is not a cursor this API returned"})
		}
	}
	if len(errs) > 0 {
		return invalid(errs...)
	}
	depths, err := s.Store.DLQDepths(r.Context())
	if err != nil {
		return s.internal(r, err)
	}
	all := make([]TenantDepthView, 0, len(depths))
	for t, n := range depths {
		all = append(all, TenantDepthView{TenantID: t, DLQDepth: n})
	}
	order := func(a, b TenantDepthView) int {
		return cmp.Or(cmp.Compare(b.DLQDepth, a.DLQDepth), strings.Compare(a.TenantID, b.TenantID))
	}
	slices.SortFunc(all, order)
	if after != nil {
		i, _ := slices.BinarySearchFunc(all, TenantDepthView{TenantID: after.Tenant, DLQDepth: after.Depth}, order)
		for i < len(all) && order(all[i], TenantDepthView{TenantID: after.Tenant, DLQDepth: after.Depth}) <= 0 {
			i++
		}
		all = all[i:]
	}
	out := page[TenantDepthView]{Data: all[:min(limit, len(all))]}
	if len(all) > limit {
		last := out.Data[limit-1]
		b, _ := json.Marshal(tenantCursor{Depth: last.DLQDepth, Tenant: last.TenantID})
		out.NextCursor = base64.RawURLEncoding.EncodeToString(b)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// Alarms reads the stack's alarms: CloudWatch's DescribeAlarms.
type Alarms interface {
	DescribeAlarms(ctx context.Context, in *cloudwatch.DescribeAlarmsInput, optFns ...func(*cloudwatch.Options)) (*cloudwatch.DescribeAlarmsOutput, error)
}

var _ Alarms = (*cloudwatch.Client)(nil)

// AlarmView is one alarm in ALARM.
type AlarmView struct {
	Name      string    `json:"name"`
	Reason    string    `json:"reason"`
	UpdatedAt time.Time `json:"updated_at"`
}

// maxAlarmPages bounds the DescribeAlarms pages one request reads (100
// alarms a page): the stack has about twenty.
const maxAlarmPages = 5

// listAlarms lists the stack's alarms (names starting with AlarmNamePrefix)
// in ALARM, or answers 503 when they cannot be read here. It asks for
// metric alarms only (the stack makes no composite alarm): on AWS,
// DescribeAlarms returns composite alarms only to a caller granted it on
// "*", and answers AccessDenied to the api function, whose grant is scoped
// to the instance's alarm ARNs, for a request that asks for them, or that
// names no AlarmTypes (which means metric and composite alike).
func (s *Server) listAlarms(w http.ResponseWriter, r *http.Request, _ string) *Problem {
	if s.Alarms == nil || s.AlarmNamePrefix == "" {
		return problem(http.StatusServiceUnavailable, "alarms cannot be read here")
	}
	in := &cloudwatch.DescribeAlarmsInput{
		AlarmNamePrefix: aws.String(s.AlarmNamePrefix),
		StateValue:      cwtypes.StateValueAlarm,
		AlarmTypes:      []cwtypes.AlarmType{cwtypes.AlarmTypeMetricAlarm},
		MaxRecords:      aws.Int32(100),
	}
	out := page[AlarmView]{Data: []AlarmView{}}
	for range maxAlarmPages {
		res, err := s.Alarms.DescribeAlarms(r.Context(), in)
		if err != nil {
			s.log().WarnContext(r.Context(), "describe alarms", "error", err.Error())
			return problem(http.StatusServiceUnavailable, "alarms cannot be read here")
		}
		for _, a := range res.MetricAlarms {
			out.Data = append(out.Data, AlarmView{Name: aws.ToString(a.AlarmName), Reason: aws.ToString(a.StateReason), UpdatedAt: aws.ToTime(a.StateUpdatedTimestamp).UTC()})
		}
		if in.NextToken = res.NextToken; in.NextToken == nil {
			break
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
