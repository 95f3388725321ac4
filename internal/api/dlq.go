package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/hookline/hookline/internal/cancel"
	"github.com/hookline/hookline/internal/dlq"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/erasure"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/replay"
	"github.com/hookline/hookline/internal/store"
)

// JobStarter records a job of any kind (a replay, a cancel, the operator's
// redrive, an erasure) and sets it running, or refuses it with
// store.ErrTooManyJobs when the tenant has as many jobs open as it may.
type JobStarter interface {
	Start(ctx context.Context, j *domain.Job) error
}

// JobRetryAfter is the Retry-After of a job refused because the tenant has
// too many jobs open: about the time a job of a few hundred deliveries
// takes at the default pace.
const JobRetryAfter = 30 * time.Second

// DeadLetterView is a dead delivery as the DLQ listing shows it.
type DeadLetterView struct {
	ID         string            `json:"id"`
	EventID    string            `json:"event_id"`
	EventType  string            `json:"event_type"`
	EndpointID string            `json:"endpoint_id"`
	DeadReason domain.DeadReason `json:"dead_reason"`
	Attempts   int               `json:"attempts"`
	LastStatus int               `json:"last_status,omitempty"`
	LastError  string            `json:"last_error,omitempty"`
	DeadAt     *time.Time        `json:"dead_at"`
	ReplayedAt *time.Time        `json:"replayed_at,omitempty"`
}

// JobView is a job of any kind as the API shows it (docs/openapi.yaml's
// JobView).
type JobView struct {
	ID          string            `json:"id"`
	Kind        domain.JobKind    `json:"kind"`
	Status      domain.JobStatus  `json:"status"`
	Matched     int               `json:"matched"`
	Replayed    int               `json:"replayed"`
	Skipped     map[string]int    `json:"skipped"`
	SkippedIDs  map[string]string `json:"skipped_ids"`
	Failed      int               `json:"failed"`
	CreatedAt   time.Time         `json:"created_at"`
	UpdatedAt   time.Time         `json:"updated_at"`
	CompletedAt *time.Time        `json:"completed_at,omitempty"`
	// Erasure is an erase job's progress: the tenant, the phase under way
	// (none once completed), and the items deleted by kind.
	Erasure *domain.Erasure `json:"erasure,omitempty"`
	// Range is what a replay since a time (kind since) or a cancel (kind
	// cancel) selects.
	Range *domain.Range `json:"range,omitempty"`
	// NotRebuilt counts the deliveries a replay since a time could not
	// send again (their reasons in skipped: payload_expired, event_gone).
	NotRebuilt int `json:"not_rebuilt"`
	// Cancelled counts the deliveries a cancel cancelled; CancelledIDs
	// names the first 100.
	Cancelled    int      `json:"cancelled"`
	CancelledIDs []string `json:"cancelled_ids"`
}

// writeJob answers with job j's view (its kind's arguments decoded).
func (s *Server) writeJob(w http.ResponseWriter, r *http.Request, status int, j domain.Job) *Problem {
	v, err := jobView(j)
	if err != nil {
		return s.internal(r, err)
	}
	writeJSON(w, status, v)
	return nil
}

func jobView(j domain.Job) (JobView, error) {
	v := JobView{ID: j.JobID, Kind: j.Kind, Status: j.Status, Matched: j.Matched, Replayed: j.Replayed,
		Skipped: j.Skipped, SkippedIDs: j.SkippedIDs, Failed: j.Failed, CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt, CompletedAt: j.CompletedAt,
		CancelledIDs: []string{}}
	switch j.Kind {
	case domain.KindErase:
		a, err := jobs.ArgsOf[erasure.Args](&j)
		if err != nil {
			return v, err
		}
		v.Erasure = &a.Erasure
	case domain.KindSince:
		a, err := jobs.ArgsOf[replay.Since](&j)
		if err != nil {
			return v, err
		}
		v.Range, v.NotRebuilt = &a.Range, a.NotRebuilt
	case domain.KindCancel:
		a, err := jobs.ArgsOf[cancel.Args](&j)
		if err != nil {
			return v, err
		}
		v.Range, v.Cancelled = &a.Range, a.Cancelled
		if a.CancelledIDs != nil {
			v.CancelledIDs = a.CancelledIDs
		}
	}
	if v.Skipped == nil {
		v.Skipped = map[string]int{}
	}
	if v.SkippedIDs == nil {
		v.SkippedIDs = map[string]string{}
	}
	return v, nil
}

// filterFrom reads a dead-letter filter; field names are those of the query
// string and of the replay body alike, and the listing and a replay by
// filter check it by the same rules, so a replay job is never accepted with
// a filter the listing would refuse. now is the server's clock: a since
// after it can match nothing, and is refused as the client's mistake.
func filterFrom(endpoint, eventType, since, until string, now time.Time) (domain.DeadFilter, []FieldError) {
	f := domain.DeadFilter{EndpointID: endpoint, EventType: eventType}
	var errs []FieldError
	f.Since, f.Until = timeParam("since", since, &errs), timeParam("until", until, &errs)
	if f.Since.After(now) {
		errs = append(errs, FieldError{Field: "since", Message: "is in the future (the server's time is " + now.UTC().Format(time.RFC3339) + "): no delivery died then"})
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && f.Until.Before(f.Since) {
		errs = append(errs, FieldError{Field: "until", Message: "is before since"})
	}
	if len(endpoint) > 256 {
		errs = append(errs, FieldError{Field: "endpoint_id", Message: "is over 256 bytes"})
	}
	if len(eventType) > 256 {
		errs = append(errs, FieldError{Field: "event_type", Message: "is over 256 bytes"})
	}
	return f, errs
}

// queryParams reads the query parameters of a route: each at most once and,
// when present, not empty (an empty value is a client's bug, not a request
// for the default). The values of the absent ones are "".
func queryParams(r *http.Request, names ...string) (map[string]string, []FieldError) {
	q := r.URL.Query()
	out := make(map[string]string, len(names))
	var errs []FieldError
	for _, name := range names {
		vs, ok := q[name]
		switch {
		case !ok:
		case len(vs) > 1:
			errs = append(errs, FieldError{Field: name, Message: "is given more than once"})
		case vs[0] == "":
			errs = append(errs, FieldError{Field: name, Message: "is empty: give a value or leave the parameter out"})
		default:
			out[name] = vs[0]
		}
	}
	return out, errs
}

// listRequest reads a listing's query string: the filter parse makes of
// the names, limit (limitParam) and cursor. What is wrong with any of them
// is one 400.
func listRequest[F any](r *http.Request, parse func(map[string]string) (F, []FieldError), names ...string) (f F, limit int, cursor string, p *Problem) {
	q, errs := queryParams(r, append(names, "limit", "cursor")...)
	f, ferrs := parse(q)
	errs = append(errs, ferrs...)
	limit, lerr := limitParam(q["limit"])
	if lerr != nil {
		errs = append(errs, *lerr)
	}
	if len(q["cursor"]) > 1024 {
		errs = append(errs, FieldError{Field: "cursor", Message: "is not a cursor this API returned"})
	}
	if len(errs) > 0 {
		return f, 0, "", invalid(errs...)
	}
	return f, limit, q["cursor"], nil
}

// pageParams reads the query of a listing without filters: its limit
// (limitParam) and its cursor, as given; errs holds what is wrong with
// either, and any parameter given twice or empty.
func pageParams(r *http.Request) (limit int, cursor string, errs []FieldError) {
	q, errs := queryParams(r, "limit", "cursor")
	limit, lerr := limitParam(q["limit"])
	if lerr != nil {
		errs = append(errs, *lerr)
	}
	return limit, q["cursor"], errs
}

// limitParam reads the limit parameter: default 50, from 1 to 100.
func limitParam(v string) (int, *FieldError) {
	if v == "" {
		return 50, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 100 {
		return 0, &FieldError{Field: "limit", Message: "must be a whole number from 1 to 100"}
	}
	return n, nil
}

// cursorError is the field error of a cursor the store refused, nil for
// another error.
func cursorError(err error) *FieldError {
	switch {
	case errors.Is(err, store.ErrCursorMismatch):
		return &FieldError{Field: "cursor", Message: "does not belong to this query: send it with the same filters as the request that returned it"}
	case errors.Is(err, store.ErrBadCursor):
		return &FieldError{Field: "cursor", Message: "is not a cursor this API returned"}
	}
	return nil
}

// listingError is the problem a store listing's err makes: a cursor of
// another query or none of the API's (400, naming the cursor), a filter the
// store cannot query (400; the handlers' own checks refuse each first, so
// not reached), another error (500), or nil.
func (s *Server) listingError(r *http.Request, err error) *Problem {
	if ce := cursorError(err); ce != nil {
		return invalid(*ce)
	}
	if errors.Is(err, store.ErrBadFilter) {
		return problem(http.StatusBadRequest, "the filter cannot be queried: %s", err.Error())
	}
	if errors.Is(err, store.ErrSecondTooLarge) {
		return problem(http.StatusServiceUnavailable, "one second of this delivery log holds more deliveries than one listing reads (16 queries of a shard's pages); each is still read by its id, and an event's deliveries with GET /v1/events/{event_id}")
	}
	if err != nil {
		return s.internal(r, err)
	}
	return nil
}

func (s *Server) listDLQ(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	f, limit, cursor, p := listRequest(r, func(q map[string]string) (domain.DeadFilter, []FieldError) {
		return filterFrom(q["endpoint_id"], q["event_type"], q["since"], q["until"], s.now())
	}, "endpoint_id", "event_type", "since", "until")
	if p != nil {
		return p
	}
	ds, next, err := s.Store.ListDead(r.Context(), tenant, f, limit, cursor)
	if p := s.listingError(r, err); p != nil {
		return p
	}
	out := page[DeadLetterView]{Data: make([]DeadLetterView, 0, len(ds)), NextCursor: next}
	for _, d := range ds {
		out.Data = append(out.Data, DeadLetterView{ID: d.DeliveryID, EventID: d.EventID, EventType: d.EventType, EndpointID: d.EndpointID,
			DeadReason: d.DeadReason, Attempts: d.Attempts, LastStatus: d.LastStatus, LastError: d.LastError, DeadAt: d.DeadAt, ReplayedAt: d.ReplayedAt})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// MaxReplayIDs bounds a replay by ids.
const MaxReplayIDs = 1000

func (s *Server) replayDLQ(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	var in struct {
		DeliveryIDs []string `json:"delivery_ids"`
		EndpointID  *string  `json:"endpoint_id"`
		EventType   *string  `json:"event_type"`
		Since       *string  `json:"since"`
		Until       *string  `json:"until"`
	}
	if p := decode(w, r, &in); p != nil {
		return p
	}
	var errs []FieldError
	str := func(field string, v *string) string {
		if v == nil {
			return ""
		}
		if *v == "" {
			errs = append(errs, FieldError{Field: field, Message: "is empty: give a value or leave the field out"})
		}
		return *v
	}
	endpoint, eventType, since, until := str("endpoint_id", in.EndpointID), str("event_type", in.EventType), str("since", in.Since), str("until", in.Until)
	f, ferrs := filterFrom(endpoint, eventType, since, until, s.now())
	errs = append(errs, ferrs...)
	job := domain.NewJob(tenant, &replay.Filter{Filter: f})
	if in.DeliveryIDs != nil {
		job = domain.NewJob(tenant, &replay.IDs{IDs: in.DeliveryIDs})
		if f != (domain.DeadFilter{}) {
			errs = append(errs, FieldError{Field: "delivery_ids", Message: "cannot be combined with a filter: replay by ids or by filter"})
		}
		if len(in.DeliveryIDs) == 0 || len(in.DeliveryIDs) > MaxReplayIDs {
			errs = append(errs, FieldError{Field: "delivery_ids", Message: "must hold 1 to 1000 ids"})
		}
		seen := map[string]bool{}
		for i, id := range in.DeliveryIDs {
			if id == "" || len(id) > 256 {
				errs = append(errs, FieldError{Field: "delivery_ids[" + strconv.Itoa(i) + "]", Message: "is not a delivery id"})
			}
			if seen[id] {
				errs = append(errs, FieldError{Field: "delivery_ids[" + strconv.Itoa(i) + "]", Message: "is repeated"})
			}
			seen[id] = true
		}
	}
	if len(errs) > 0 {
		return invalid(errs...)
	}
	return s.startJob(w, r, job)
}

// startJob starts job under a fresh id: 202 with the job, 429 when its
// tenant has no place left, 409 when its record lost a race (nothing was
// started; docs/openapi.yaml's JobStartConflict), never a 500 for either.
func (s *Server) startJob(w http.ResponseWriter, r *http.Request, job domain.Job) *Problem {
	if s.Jobs == nil {
		return problem(http.StatusServiceUnavailable, "jobs are not configured on this deployment (they run on the replay worker)")
	}
	// A job's id keeps the prefix rj_ of when every job was a replay: the
	// ids a tenant holds, and the stored ones, look alike.
	id, err := s.newID("rj_")
	if err != nil {
		return s.internal(r, err)
	}
	job.JobID = id
	err = s.Jobs.Start(r.Context(), &job)
	if errors.Is(err, store.ErrTooManyJobs) {
		w.Header().Set("Retry-After", strconv.Itoa(int(JobRetryAfter.Seconds())))
		return problem(http.StatusTooManyRequests,
			"this tenant has as many jobs queued or running as it may; retry when one completes (GET /v1/replays/{job_id} follows them)")
	}
	if errors.Is(err, store.ErrConflict) {
		// The job's fresh id was written by another change at the same
		// moment: nothing was started, and starting again is safe. A race
		// lost, not a server fault.
		s.log().WarnContext(r.Context(), "job start lost a race", "job_id", id, "kind", job.Kind, "error", err.Error())
		return problem(http.StatusConflict, "another change to this job won while it was being started; nothing was started: send the request again")
	}
	if err != nil {
		return s.internal(r, err)
	}
	// Every job is followed under /v1/replays/, the routes' earlier name.
	path := "/v1/replays/"
	if job.TenantID == "" {
		path = "/v1/admin/replays/"
	}
	w.Header().Set("Location", path+id)
	return s.writeJob(w, r, http.StatusAccepted, job)
}

func (s *Server) getJob(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	id := r.PathValue("job_id")
	j, err := s.Store.Job(r.Context(), id)
	if err == nil && j.TenantID != tenant {
		err = store.ErrNotFound
	}
	if err != nil {
		return s.found(r, "job "+strconv.Quote(id), err)
	}
	return s.writeJob(w, r, http.StatusOK, j)
}

func (s *Server) redriveDLQ(w http.ResponseWriter, r *http.Request, _ string) *Problem {
	return s.startJob(w, r, domain.NewJob("", &dlq.RedriveArgs{}))
}

func (s *Server) getAdminJob(w http.ResponseWriter, r *http.Request, _ string) *Problem {
	id := r.PathValue("job_id")
	j, err := s.Store.Job(r.Context(), id)
	if err != nil {
		return s.found(r, "job "+strconv.Quote(id), err)
	}
	return s.writeJob(w, r, http.StatusOK, j)
}

// StatsView is the operator's view of dead letters across tenants.
type StatsView struct {
	// DLQDepthByTenant is each tenant's count of dead deliveries.
	DLQDepthByTenant map[string]int `json:"dlq_depth_by_tenant"`
	// DLQDepthTotal is their sum.
	DLQDepthTotal int `json:"dlq_depth_total"`
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request, _ string) *Problem {
	depths, err := s.Store.DLQDepths(r.Context())
	if err != nil {
		return s.internal(r, err)
	}
	v := StatsView{DLQDepthByTenant: map[string]int{}}
	for t, n := range depths {
		if n > 0 {
			v.DLQDepthByTenant[t] = n
			v.DLQDepthTotal += n
		}
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}
