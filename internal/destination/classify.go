package destination

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/sender"
)

// class is what an AWS error code means for a delivery.
type class int

const (
	classUnknown class = iota
	classRetry
	classAccessDenied
	classNotFound
	classKeyUnusable
	classRefused
)

// classes maps the error codes SQS, SNS, EventBridge and KMS (through
// them) answer a send with to their class; docs/destinations.md is this
// table. SQS's clients report the query-compatible codes
// (AWS.SimpleQueueService.NonExistentQueue, KMS.DisabledException) when
// SQS sends them, its JSON names (QueueDoesNotExist, KmsDisabled) when it
// does not: both are here. A code not here is classed by its status.
var classes = func() map[string]class {
	m := map[string]class{}
	add := func(c class, codes string) {
		for _, code := range strings.Fields(codes) {
			m[code] = c
		}
	}
	// Throttling, the services' own and KMS's through them, and 5xx.
	add(classRetry, `Throttling ThrottlingException ThrottledException Throttled RequestThrottled
		AWS.SimpleQueueService.RequestThrottled OverLimit TooManyRequestsException RequestLimitExceeded
		LimitExceededException SlowDown KMS.ThrottlingException KmsThrottled KMSThrottling KMSThrottlingException
		InternalError InternalFailure InternalServerError InternalException ServiceUnavailable
		ServiceUnavailableException RequestTimeout RequestTimeoutException KeyUnavailableException KMSInternalException`)
	// Our own credentials refused (expired, clock skew): the next attempt
	// has fresh ones.
	add(classRetry, `ExpiredToken ExpiredTokenException RequestExpired InvalidClientTokenId
		UnrecognizedClientException SignatureDoesNotMatch IncompleteSignature InvalidSignatureException`)
	add(classAccessDenied, `AccessDenied AccessDeniedException AuthorizationError AuthorizationErrorException
		NotAuthorizedForSourceException KMS.AccessDeniedException KmsAccessDenied KMSAccessDenied KMSAccessDeniedException`)
	add(classNotFound, `QueueDoesNotExist AWS.SimpleQueueService.NonExistentQueue NonExistentQueue NotFound
		NotFoundException ResourceNotFoundException`)
	add(classKeyUnusable, `KMS.DisabledException KmsDisabled KMSDisabled KMSDisabledException
		KMS.InvalidStateException KmsInvalidState KMSInvalidState KMSInvalidStateException
		KMS.NotFoundException KmsNotFound KMSNotFound KMSNotFoundException
		KMS.InvalidKeyUsageException KmsInvalidKeyUsage KMSInvalidKeyUsage
		KMS.OptInRequired KmsOptInRequired KMSOptInRequired`)
	add(classRefused, `InvalidParameter InvalidParameterValue InvalidParameterValueException ParameterValueInvalid
		ValidationException ValidationError InvalidMessageContents InvalidArgument MalformedDetail
		UnsupportedOperation AWS.SimpleQueueService.UnsupportedOperation InvalidAttributeName InvalidAttributeValue
		InvalidAddress InvalidSecurity EndpointDisabled PlatformApplicationDisabled`)
	return m
}()

// staleCodes are the codes with which a service refuses the session's
// credentials themselves.
var staleCodes = map[string]bool{"ExpiredToken": true, "ExpiredTokenException": true, "InvalidClientTokenId": true, "UnrecognizedClientException": true}

// staleSession reports whether a send's Result.Error ("sqs:ExpiredToken")
// says its session's credentials were refused.
func staleSession(resErr string) bool {
	_, code, ok := strings.Cut(resErr, ":")
	return ok && staleCodes[code]
}

// deadReasons are the dead classes' reasons.
var deadReasons = map[class]domain.DeadReason{
	classAccessDenied: domain.ReasonDestinationAccessDenied,
	classNotFound:     domain.ReasonDestinationNotFound,
	classKeyUnusable:  domain.ReasonDestinationKeyUnusable,
	classRefused:      domain.ReasonDestinationRefused,
}

// classifyCall maps a failed call to service ("sqs", "sns", "events") to
// a Result: a known code by its class; an unknown one by its status (429
// and 5xx retried, another 4xx dead, destination_refused); no answer
// (network, timeout) retried.
func classifyCall(service string, err error) sender.Result {
	res, code, status := failure(service, err)
	if code == "" {
		if status == 0 {
			return res
		}
		return withClass(res, byStatus(status))
	}
	c := classes[code]
	if c == classUnknown {
		c = byStatus(status)
	}
	return withClass(res, c)
}

// classifyAssume maps a failed AssumeRole to a Result: throttling, 5xx,
// our own credentials' trouble and no answer retried; any other refusal
// (AccessDenied: no such role, a trust policy that does not name us or
// wants another external ID) dead, destination_role_refused.
func classifyAssume(err error) sender.Result {
	res, code, status := failure("sts", err)
	if code == "" && status == 0 {
		return res
	}
	if classes[code] == classRetry || classes[code] == classUnknown && byStatus(status) == classRetry {
		return res
	}
	res.Outcome, res.Reason = sender.Dead, domain.ReasonDestinationRoleRefused
	return res
}

// classifyEntry maps a PutEvents entry's ErrorCode to a Result. An entry
// has no status: an unknown code is retried (the schedule ends it).
func classifyEntry(code, message string) sender.Result {
	res := sender.Result{Outcome: sender.Retry, Status: 200, Error: clipTo("events:"+code, maxErrorBytes), Excerpt: clip(message)}
	return withClass(res, classes[code])
}

// SettleFor is how long after an endpoint is created or changed
// (sender.Destination.ChangedAt) an AssumeRole refused
// (destination_role_refused) or a send denied (destination_access_denied)
// is retried on the schedule rather than dead: IAM's changes (a role, its
// trust policy, its permissions, a key policy) are eventually consistent,
// and a customer who saves a trust policy and registers the endpoint at
// once must not lose the first events to the DLQ. 15 minutes covers the
// default schedule's first four attempts (0, 5 s, 30 s, 5 min); past it
// the refusal is dead, AWS's message kept in the attempt's excerpt.
// docs/destinations.md states it.
const SettleFor = 15 * time.Minute

// settles are the dead reasons IAM's eventual consistency explains.
var settles = map[domain.DeadReason]bool{
	domain.ReasonDestinationRoleRefused:  true,
	domain.ReasonDestinationAccessDenied: true,
}

// settle turns res, a refusal IAM's eventual consistency explains, into a
// retry while now is within SettleFor of changedAt (zero: never). The
// error and AWS's message stay as they are.
func settle(res sender.Result, changedAt, now time.Time) sender.Result {
	if res.Outcome != sender.Dead || !settles[res.Reason] || changedAt.IsZero() || !now.Before(changedAt.Add(SettleFor)) {
		return res
	}
	res.Outcome, res.Reason, res.DisableEndpoint = sender.Retry, "", ""
	return res
}

func withClass(res sender.Result, c class) sender.Result {
	if reason, dead := deadReasons[c]; dead {
		res.Outcome, res.Reason = sender.Dead, reason
	}
	return res
}

func byStatus(status int) class {
	if status == 0 || status == 429 || status >= 500 {
		return classRetry
	}
	return classRefused
}

// failure reads err: a Retry Result naming it, the AWS error code ("" when
// no AWS answer came: timeout or network) and the HTTP status.
func failure(service string, err error) (res sender.Result, code string, status int) {
	res = sender.Result{Outcome: sender.Retry, Error: "network"}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
		res.Status = status
	}
	var ae smithy.APIError
	switch {
	case errors.As(err, &ae) && ae.ErrorCode() != "":
		code = ae.ErrorCode()
		res.Error, res.Excerpt = clipTo(service+":"+code, maxErrorBytes), clip(ae.ErrorMessage())
	case status > 0:
		res.Error, res.Excerpt = service+":http_"+strconv.Itoa(status), clip(err.Error())
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		res.Error = "timeout"
	default:
		res.Excerpt = clip(err.Error())
	}
	return res, code, status
}

// maxErrorBytes bounds Result.Error (the attempt log keeps 128 bytes).
const maxErrorBytes = 128

// clip keeps s within the attempt log's excerpt.
func clip(s string) string { return clipTo(s, sender.ExcerptBytes) }

func clipTo(s string, n int) string {
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "")
	}
	return s
}
