package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/replay"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/trace"
)

// DeliveryQueue is what a resend needs of SQS: one message on the delivery
// queue.
type DeliveryQueue interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

var _ DeliveryQueue = (*sqs.Client)(nil)

// ResendView is the answer to a resend: the delivery sent again, and, for
// a dead one, the replay job that sends it.
type ResendView struct {
	DeliveryID string `json:"delivery_id"`
	// State is the delivery's state when the resend was accepted:
	// delivered or dead.
	State domain.DeliveryState `json:"state"`
	// ReplayJobID is the replay job of a dead delivery's resend.
	ReplayJobID string `json:"replay_job_id,omitempty"`
}

// resendDelivery sends a delivered or dead delivery again, with its id
// (webhook-id) and a fresh retry schedule. A dead one goes through a replay
// job of its id alone, with every invariant of a replay (the claim, the DLQ
// depth, replayed_at); a delivered one as a fresh message rebuilt from its
// outbox item, marked resend (deliver attempts it, logs its attempts as
// the resend's and leaves the delivery delivered).
func (s *Server) resendDelivery(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	id := r.PathValue("delivery_id")
	d, err := s.Store.Delivery(r.Context(), id)
	if err == nil && d.TenantID != tenant {
		err = store.ErrNotFound // another tenant's delivery is as good as missing
	}
	if err != nil {
		return s.found(r, "delivery "+strconv.Quote(id), err)
	}
	ep, err := s.Store.Endpoint(r.Context(), tenant, d.EndpointID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return problem(http.StatusConflict, "the endpoint %q of delivery %q no longer exists: there is nothing to resend to", d.EndpointID, id)
	case err != nil:
		return s.internal(r, err)
	case ep.Disabled:
		return problem(http.StatusConflict, "the endpoint %q is disabled: enable it (POST /v1/endpoints/%s/enable) before resending", d.EndpointID, d.EndpointID)
	}
	switch d.State {
	case domain.StateDead:
		return s.resendDead(w, r, d)
	case domain.StateDelivered:
		return s.resendDelivered(w, r, d)
	}
	return problem(http.StatusConflict, "delivery %q is %s: it is still being attempted; resend it once it is delivered or dead", id, d.State)
}

// resendDead replays the dead delivery d alone.
func (s *Server) resendDead(w http.ResponseWriter, r *http.Request, d domain.Delivery) *Problem {
	if s.Jobs == nil {
		return problem(http.StatusServiceUnavailable, "replay is not configured on this deployment")
	}
	jobID, err := s.newID("rj_")
	if err != nil {
		return s.internal(r, err)
	}
	job := domain.NewJob(d.TenantID, &replay.IDs{IDs: []string{d.DeliveryID}})
	job.JobID = jobID
	err = s.Jobs.Start(r.Context(), &job)
	if errors.Is(err, store.ErrTooManyJobs) {
		w.Header().Set("Retry-After", strconv.Itoa(int(JobRetryAfter.Seconds())))
		return problem(http.StatusTooManyRequests,
			"this tenant has as many jobs queued or running as it may, and resending a dead delivery is one; retry when one completes")
	}
	if err != nil {
		return s.internal(r, err)
	}
	writeJSON(w, http.StatusAccepted, ResendView{DeliveryID: d.DeliveryID, State: d.State, ReplayJobID: jobID})
	return nil
}

// resendDelivered sends the delivered delivery d again, from its event's
// outbox item: gone or past the payload retention is 410.
func (s *Server) resendDelivered(w http.ResponseWriter, r *http.Request, d domain.Delivery) *Problem {
	if s.MessageLog == nil || s.DeliveryQueue == nil {
		return problem(http.StatusServiceUnavailable, "resending a delivered delivery is not configured on this deployment (it needs the message log)")
	}
	ev, err := s.MessageLog.Event(r.Context(), d.TenantID, d.EventID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (s.payloadExpired(ev.OccurredAt) || ev.Payload == nil)) {
		return problem(http.StatusGone, "the payload of event %q is no longer kept (payloads are kept %s after the event): it cannot be sent again", d.EventID, s.payloadRetention())
	}
	if err != nil {
		return s.internal(r, err)
	}
	now := s.now().UTC()
	// In the event's trace: its outbox item's, else the one enqueue derived.
	span := s.Tracer.Start(trace.Or(ev.TraceParent, trace.Derive(trace.EventKey(d.TenantID, ev.ID), ev.OccurredAt)), "api.resend")
	defer span.End(r.Context(), slog.String("tenant_id", d.TenantID), slog.String("delivery_id", d.DeliveryID))
	body, err := message.Encode(message.Message{
		DeliveryID: d.DeliveryID, TenantID: d.TenantID, EndpointID: d.EndpointID, EventID: ev.ID, EventType: ev.Type,
		OccurredAt: ev.OccurredAt, Sequence: ev.Sequence, Payload: ev.Payload, ReplayedAt: &now, Resend: true,
		TraceParent: span.TraceParent(),
	})
	if err != nil {
		return s.internal(r, err)
	}
	// In its tenant's message group (message.GroupID), as enqueue sent it.
	in := &sqs.SendMessageInput{QueueUrl: aws.String(s.DeliveryQueueURL), MessageBody: aws.String(string(body)), MessageGroupId: message.GroupID(d.TenantID),
		MessageAttributes: message.TraceAttributes(span.TraceParent())}
	if _, err := s.DeliveryQueue.SendMessage(r.Context(), in); err != nil {
		return s.internal(r, err)
	}
	s.log().InfoContext(r.Context(), "resend sent", "delivery_id", d.DeliveryID, "tenant_id", d.TenantID, "endpoint_id", d.EndpointID, "at", now.Format(time.RFC3339))
	writeJSON(w, http.StatusAccepted, ResendView{DeliveryID: d.DeliveryID, State: d.State})
	return nil
}
