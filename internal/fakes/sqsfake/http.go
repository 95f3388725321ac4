package sqsfake

import (
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookline/hookline/internal/fakes/awsfake"
)

// AddQueue creates the queue at url (any URL: an SQS one,
// https://sqs.REGION.amazonaws.com/ACCOUNT/NAME, or a local cloud's).
func (q *Queue) AddQueue(url string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.queues[url]; !ok {
		q.queues[url] = nil
	}
}

// ServeHTTP answers SendMessage in SQS's AWS JSON protocol (package
// awsfake), so that an SDK client pointed at the fake sends through its
// own serializer and reads SQS's errors as it would on AWS, the
// query-compatible codes (AWS.SimpleQueueService.NonExistentQueue)
// included. Config.Authorize is asked first.
func (q *Queue) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if op := awsfake.Target(r); op != "SendMessage" {
		awsfake.WriteJSONError(w, &awsfake.Error{Status: 400, Code: "InvalidAction", QueryCode: "InvalidAction", Message: "the fake's HTTP handler answers SendMessage only, not " + op})
		return
	}
	var in sqs.SendMessageInput
	if err := awsfake.ReadJSON(r, &in); err != nil {
		awsfake.WriteJSONError(w, err)
		return
	}
	if q.cfg.Authorize != nil && !q.cfg.Authorize(awsfake.Scope(r).AccessKey, aws.ToString(in.QueueUrl)) {
		awsfake.WriteJSONError(w, &awsfake.Error{Status: 403, Code: "AccessDenied", QueryCode: "AccessDenied", Message: "Access to the resource " + aws.ToString(in.QueueUrl) + " is denied."})
		return
	}
	out, err := q.SendMessage(r.Context(), &in)
	if err != nil {
		e := awsfake.AsError(err)
		if e.QueryCode == "" {
			e.QueryCode = e.Code
		}
		awsfake.WriteJSONError(w, e)
		return
	}
	awsfake.WriteJSON(w, map[string]string{"MessageId": aws.ToString(out.MessageId)})
}
