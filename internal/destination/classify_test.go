package destination

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/awsfake"
	"github.com/hookline/hookline/internal/fakes/stsfake"
	"github.com/hookline/hookline/internal/sender"
)

// Every row of docs/destinations.md's classification table, through the
// SDK's own parsing of the fakes' wire answers.
func TestClassification(t *testing.T) {
	const retry = domain.DeadReason("")
	e := func(status int, code, query string) error {
		return &awsfake.Error{Status: status, Code: code, QueryCode: query, Message: "scripted " + code}
	}
	sqsRows := []struct {
		err  error
		want domain.DeadReason
	}{
		{e(400, "RequestThrottled", "RequestThrottled"), retry},
		{e(403, "OverLimit", "OverLimit"), retry},
		{e(400, "KmsThrottled", "KMS.ThrottlingException"), retry},
		{e(500, "InternalError", "InternalError"), retry},
		{e(503, "ServiceUnavailable", "ServiceUnavailable"), retry},
		{e(502, "SomethingNew", ""), retry},
		{e(400, "ExpiredToken", "ExpiredToken"), retry},
		{e(400, "QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue"), domain.ReasonDestinationNotFound},
		{e(400, "QueueDoesNotExist", ""), domain.ReasonDestinationNotFound},
		{e(403, "AccessDenied", "AccessDenied"), domain.ReasonDestinationAccessDenied},
		{e(400, "KmsAccessDenied", "KMS.AccessDeniedException"), domain.ReasonDestinationAccessDenied},
		{e(400, "KmsDisabled", "KMS.DisabledException"), domain.ReasonDestinationKeyUnusable},
		{e(400, "KmsInvalidState", "KMS.InvalidStateException"), domain.ReasonDestinationKeyUnusable},
		{e(400, "KmsNotFound", "KMS.NotFoundException"), domain.ReasonDestinationKeyUnusable},
		{e(400, "KmsInvalidKeyUsage", "KMS.InvalidKeyUsageException"), domain.ReasonDestinationKeyUnusable},
		{e(400, "KmsOptInRequired", "KMS.OptInRequired"), domain.ReasonDestinationKeyUnusable},
		{e(400, "InvalidMessageContents", "InvalidMessageContents"), domain.ReasonDestinationRefused},
		{e(400, "SomethingNew", ""), domain.ReasonDestinationRefused},
	}
	snsRows := []struct {
		err  error
		want domain.DeadReason
	}{
		{e(400, "Throttled", ""), retry},
		{e(400, "KMSThrottling", ""), retry},
		{e(500, "InternalError", ""), retry},
		{e(403, "AuthorizationError", ""), domain.ReasonDestinationAccessDenied},
		{e(400, "KMSAccessDenied", ""), domain.ReasonDestinationAccessDenied},
		{e(404, "NotFound", ""), domain.ReasonDestinationNotFound},
		{e(400, "KMSDisabled", ""), domain.ReasonDestinationKeyUnusable},
		{e(400, "KMSInvalidState", ""), domain.ReasonDestinationKeyUnusable},
		{e(400, "KMSNotFound", ""), domain.ReasonDestinationKeyUnusable},
		{e(400, "KMSOptInRequired", ""), domain.ReasonDestinationKeyUnusable},
		{e(400, "InvalidParameter", ""), domain.ReasonDestinationRefused},
	}
	ebRows := []struct {
		err  error
		want domain.DeadReason
	}{
		{e(400, "ThrottlingException", ""), retry},
		{e(500, "InternalException", ""), retry},
		{e(400, "AccessDeniedException", ""), domain.ReasonDestinationAccessDenied},
		{e(400, "ResourceNotFoundException", ""), domain.ReasonDestinationNotFound},
		{e(400, "ValidationException", ""), domain.ReasonDestinationRefused},
	}
	stsRows := []struct {
		err  error
		want domain.DeadReason
	}{
		{e(400, "Throttling", ""), retry},
		{e(500, "InternalFailure", ""), retry},
		{e(503, "ServiceUnavailable", ""), retry},
		{e(400, "ExpiredToken", ""), retry},
		{e(403, "InvalidClientTokenId", ""), retry},
		{e(403, "AccessDenied", ""), domain.ReasonDestinationRoleRefused},
		{e(403, "RegionDisabledException", ""), domain.ReasonDestinationRoleRefused},
		{e(400, "ValidationError", ""), domain.ReasonDestinationRoleRefused},
	}
	check := func(t *testing.T, typ domain.EndpointType, op, service string, err error, want domain.DeadReason) {
		w := newWorld(t)
		w.fail[op] = err
		res := w.send(t, request(t, typ))
		code := err.(*awsfake.Error).QueryCode
		if code == "" {
			code = err.(*awsfake.Error).Code
		}
		require.Equal(t, service+":"+code, res.Error)
		require.Equal(t, want, res.Reason, "%+v", res)
		require.Equal(t, want == retry, res.Outcome == sender.Retry, "%+v", res)
		require.Equal(t, err.(*awsfake.Error).Status, res.Status)
		require.Contains(t, res.Excerpt, "scripted")
		calls := 1
		if service == "sts" && want != retry {
			calls = 2 // the probe's, refused as the attempt's own is
		}
		require.Equal(t, calls, w.calls(service), "one call an attempt (and the probe's): the SDK does not retry")
	}
	for _, r := range sqsRows {
		t.Run("sqs "+r.err.Error(), func(t *testing.T) { check(t, domain.TypeSQS, "SendMessage", "sqs", r.err, r.want) })
	}
	for _, r := range snsRows {
		t.Run("sns "+r.err.Error(), func(t *testing.T) { check(t, domain.TypeSNS, "Publish", "sns", r.err, r.want) })
	}
	for _, r := range ebRows {
		t.Run("events "+r.err.Error(), func(t *testing.T) { check(t, domain.TypeEventBridge, "PutEvents", "events", r.err, r.want) })
	}
	for _, r := range stsRows {
		t.Run("sts "+r.err.Error(), func(t *testing.T) { check(t, domain.TypeSQS, "AssumeRole", "sts", r.err, r.want) })
	}
}

// A PutEvents entry's ErrorCode (FailedEntryCount > 0) is classified too.
func TestClassificationEntry(t *testing.T) {
	for code, want := range map[string]domain.DeadReason{
		"ThrottlingException":       "",
		"InternalFailure":           "",
		"SomethingNew":              "",
		"AccessDeniedException":     domain.ReasonDestinationAccessDenied,
		"ResourceNotFoundException": domain.ReasonDestinationNotFound,
		"KMSInvalidStateException":  domain.ReasonDestinationKeyUnusable,
		"KMSAccessDeniedException":  domain.ReasonDestinationAccessDenied,
		"InvalidArgument":           domain.ReasonDestinationRefused,
		"MalformedDetail":           domain.ReasonDestinationRefused,
	} {
		t.Run(code, func(t *testing.T) {
			w := newWorld(t)
			w.failEntry = code
			res := w.send(t, request(t, domain.TypeEventBridge))
			require.Equal(t, "events:"+code, res.Error)
			require.Equal(t, want, res.Reason)
			require.Equal(t, want == "", res.Outcome == sender.Retry)
		})
	}
}

// The rules the fakes hold the customer's account to, unscripted.
func TestClassificationAccount(t *testing.T) {
	dead := func(t *testing.T, w *world, r sender.Request, want domain.DeadReason) {
		t.Helper()
		res := w.send(t, r)
		require.Equal(t, sender.Dead, res.Outcome, "%+v", res)
		require.Equal(t, want, res.Reason, "%+v", res)
	}
	t.Run("missing queue", func(t *testing.T) {
		w := newWorld(t)
		w.sts.AddRole(stsfake.Role{ARN: customerRole, Trusted: []string{deliverRole}, ExternalID: externalID, Allow: map[string][]string{"sqs:SendMessage": {"*"}}})
		r := request(t, domain.TypeSQS)
		r.Destination.ARN = strings.Replace(queueARN, "orders", "gone", 1)
		dead(t, w, r, domain.ReasonDestinationNotFound)
	})
	t.Run("missing topic", func(t *testing.T) {
		w := newWorld(t)
		w.sts.AddRole(stsfake.Role{ARN: customerRole, Trusted: []string{deliverRole}, ExternalID: externalID, Allow: map[string][]string{"sns:Publish": {"*"}}})
		r := request(t, domain.TypeSNS)
		r.Destination.ARN = strings.Replace(topicARN, "hooks", "gone", 1)
		dead(t, w, r, domain.ReasonDestinationNotFound)
	})
	t.Run("not allowed to publish", func(t *testing.T) {
		w := newWorld(t)
		w.sts.AddRole(stsfake.Role{ARN: customerRole, Trusted: []string{deliverRole}, ExternalID: externalID})
		for _, typ := range []domain.EndpointType{domain.TypeSQS, domain.TypeSNS, domain.TypeEventBridge} {
			dead(t, w, request(t, typ), domain.ReasonDestinationAccessDenied)
		}
	})
	for name, role := range map[string]stsfake.Role{
		"another external id": {ARN: customerRole, Trusted: []string{deliverRole}, ExternalID: "someone-else"},
		"untrusted caller":    {ARN: customerRole, Trusted: []string{"arn:aws:iam::333333333333:role/x"}, ExternalID: externalID},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			w.sts.AddRole(role)
			dead(t, w, request(t, domain.TypeSQS), domain.ReasonDestinationRoleRefused)
		})
	}
	t.Run("no such role", func(t *testing.T) {
		w := newWorld(t)
		r := request(t, domain.TypeSQS)
		r.Destination.RoleARN = "arn:aws:iam::222222222222:role/nobody"
		dead(t, w, r, domain.ReasonDestinationRoleRefused)
	})
	t.Run("bus missing: AWS accepts and drops", func(t *testing.T) {
		w := newWorld(t)
		w.sts.AddRole(stsfake.Role{ARN: customerRole, Trusted: []string{deliverRole}, ExternalID: externalID, Allow: map[string][]string{"events:PutEvents": {"*"}}})
		r := request(t, domain.TypeEventBridge)
		r.Destination.ARN = strings.Replace(busARN, "hooks", "gone", 1)
		require.Equal(t, sender.Delivered, w.send(t, r).Outcome)
		require.Equal(t, 1, w.eb.Dropped())
	})
}

func TestInvalidDestination(t *testing.T) {
	w := newWorld(t)
	for name, mut := range map[string]func(d *sender.Destination){
		"bad target":     func(d *sender.Destination) { d.ARN = "orders" },
		"type mismatch":  func(d *sender.Destination) { d.Type = domain.TypeSNS },
		"http type":      func(d *sender.Destination) { d.Type = domain.TypeHTTP },
		"bad role":       func(d *sender.Destination) { d.RoleARN = "arn:aws:iam::222222222222:user/u" },
		"no external id": func(d *sender.Destination) { d.ExternalID = "" },
	} {
		r := request(t, domain.TypeSQS)
		mut(r.Destination)
		res := w.send(t, r)
		require.Equal(t, sender.Dead, res.Outcome, name)
		require.Equal(t, domain.ReasonInvalidDestination, res.Reason, name)
		require.NotEmpty(t, res.Excerpt, name)
	}
	r := request(t, domain.TypeSQS)
	r.Destination = nil
	require.Equal(t, domain.ReasonInvalidDestination, w.send(t, r).Reason)
	require.Empty(t, w.srv.Requests())
}

// A refused role is answered from memory for RefusedFor, then asked again;
// a throttled AssumeRole is not remembered.
func TestRefusalRemembered(t *testing.T) {
	w := newWorld(t)
	now := time.Now()
	w.s.o.Now = func() time.Time { return now }
	w.sts.AddRole(stsfake.Role{ARN: customerRole, Trusted: []string{deliverRole}, ExternalID: "someone-else"})
	for range 5 {
		require.Equal(t, domain.ReasonDestinationRoleRefused, w.send(t, request(t, domain.TypeSQS)).Reason)
	}
	require.Equal(t, 2, w.sts.Calls(), "the probe and the attempt's own, once")
	now = now.Add(RefusedFor)
	require.Equal(t, domain.ReasonDestinationRoleRefused, w.send(t, request(t, domain.TypeSQS)).Reason)
	require.Equal(t, 4, w.sts.Calls(), "a refused role's probe is forgotten, and made again")

	w.fail["AssumeRole"] = &awsfake.Error{Status: 400, Code: "Throttling"}
	now = now.Add(RefusedFor)
	for range 3 {
		require.Equal(t, sender.Retry, w.send(t, request(t, domain.TypeSQS)).Outcome)
	}
	require.Equal(t, 7, w.calls("sts"), "a throttled probe is retried, the attempt not made")
}

// A session within RefreshBefore of its expiry is renewed before use; a
// fresh one is kept.
func TestSessionRenewed(t *testing.T) {
	// STS's clock is 56 minutes behind for the first session only: it has
	// 4 minutes left when granted.
	first := true
	w := newWorld(t, func(c *stsfake.Config) {
		c.Now = func() time.Time {
			if first {
				first = false
				return time.Now().Add(-56 * time.Minute)
			}
			return time.Now()
		}
	})
	require.Equal(t, sender.Delivered, w.send(t, request(t, domain.TypeSNS)).Outcome)
	require.Equal(t, 3, w.sts.Calls(), "the probe, and the first session renewed at once")
	for range 3 {
		require.Equal(t, sender.Delivered, w.send(t, request(t, domain.TypeSNS)).Outcome)
	}
	require.Equal(t, 3, w.sts.Calls(), "the second is kept, the probe remembered")
}

func TestTimeout(t *testing.T) {
	w := newWorld(t)
	w.delay = 500 * time.Millisecond
	r := request(t, domain.TypeSNS)
	r.Timeout = 50 * time.Millisecond
	start := time.Now()
	res := w.send(t, r)
	require.Less(t, time.Since(start), time.Second)
	require.Equal(t, sender.Retry, res.Outcome)
	require.Equal(t, "timeout", res.Error)
}

func TestNetworkError(t *testing.T) {
	w := newWorld(t)
	cfg := w.srv.Config(deliverKey)
	cfg.BaseEndpoint = ptr("http://127.0.0.1:1")
	w.s = mustNew(t, cfg, Options{})
	res := w.send(t, request(t, domain.TypeSQS))
	require.Equal(t, sender.Retry, res.Outcome)
	require.Equal(t, "network", res.Error)
}

func ptr(s string) *string { return &s }

// A session the service refuses (expired early, revoked) is not reused.
func TestStaleSessionRenewed(t *testing.T) {
	w := newWorld(t)
	require.Equal(t, sender.Delivered, w.send(t, request(t, domain.TypeSQS)).Outcome)
	w.fail["SendMessage"] = &awsfake.Error{Status: 403, Code: "ExpiredToken", QueryCode: "ExpiredToken"}
	require.Equal(t, sender.Retry, w.send(t, request(t, domain.TypeSQS)).Outcome)
	delete(w.fail, "SendMessage")
	require.Equal(t, sender.Delivered, w.send(t, request(t, domain.TypeSQS)).Outcome)
	require.Equal(t, 3, w.sts.Calls(), "one probe, two sessions")
}

// IAM is eventually consistent: a role, its trust policy or its
// permissions saved just before the endpoint was registered (or changed)
// may be refused for a while. Within SettleFor of the endpoint's change,
// an AssumeRole refused and a send denied are retried, AWS's answer kept;
// once the role is visible the delivery goes through; past the window the
// same refusal is dead at once, AWS's message kept. An endpoint with no
// change time has no window.
func TestIAMSettleWindow(t *testing.T) {
	const newRole = "arn:aws:iam::222222222222:role/just-created"
	start := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	setup := func(t *testing.T) (*world, *time.Time, sender.Request) {
		w := newWorld(t)
		now := start
		w.s.o.Now = func() time.Time { return now }
		r := request(t, domain.TypeSQS)
		r.Destination.RoleARN, r.Destination.ChangedAt = newRole, start
		return w, &now, r
	}
	retried := func(t *testing.T, res sender.Result, code, says string) {
		t.Helper()
		require.Equal(t, sender.Retry, res.Outcome, "%+v", res)
		require.Empty(t, res.Reason)
		require.Empty(t, res.DisableEndpoint)
		require.Equal(t, code, res.Error, "AWS's code kept")
		require.Contains(t, res.Excerpt, says, "AWS's message kept")
	}

	t.Run("role not visible yet, then visible", func(t *testing.T) {
		w, now, r := setup(t)
		retried(t, w.send(t, r), "sts:AccessDenied", "not authorized to perform: sts:AssumeRole")
		*now = now.Add(5 * time.Second)
		retried(t, w.send(t, r), "sts:AccessDenied", "not authorized")
		w.sts.AddRole(stsfake.Role{ARN: newRole, Trusted: []string{deliverRole}, ExternalID: externalID, Allow: map[string][]string{"sqs:SendMessage": {queueARN}}})
		*now = now.Add(RefusedFor)
		require.Equal(t, sender.Delivered, w.send(t, r).Outcome)
		require.Len(t, w.sqs.Bodies(w.queueURL), 1)
	})
	t.Run("send denied, then allowed", func(t *testing.T) {
		w, now, r := setup(t)
		w.sts.AddRole(stsfake.Role{ARN: newRole, Trusted: []string{deliverRole}, ExternalID: externalID})
		res := w.send(t, r)
		require.Equal(t, sender.Retry, res.Outcome, "%+v", res)
		require.Contains(t, res.Error, "AccessDenied")
		require.NotEmpty(t, res.Excerpt)
		w.sts.AddRole(stsfake.Role{ARN: newRole, Trusted: []string{deliverRole}, ExternalID: externalID, Allow: map[string][]string{"sqs:SendMessage": {queueARN}}})
		*now = now.Add(30 * time.Second)
		require.Equal(t, sender.Delivered, w.send(t, r).Outcome, "the same session, its permissions now visible")
	})
	t.Run("past the window: dead, AWS's message kept", func(t *testing.T) {
		w, now, r := setup(t)
		*now = start.Add(SettleFor - time.Second)
		retried(t, w.send(t, r), "sts:AccessDenied", "not authorized")
		*now = start.Add(SettleFor)
		res := w.send(t, r)
		require.Equal(t, sender.Dead, res.Outcome)
		require.Equal(t, domain.ReasonDestinationRoleRefused, res.Reason)
		require.Equal(t, "sts:AccessDenied", res.Error)
		require.Contains(t, res.Excerpt, "not authorized to perform: sts:AssumeRole")

		w.sts.AddRole(stsfake.Role{ARN: newRole, Trusted: []string{deliverRole}, ExternalID: externalID})
		*now = now.Add(RefusedFor)
		res = w.send(t, r)
		require.Equal(t, sender.Dead, res.Outcome, "%+v", res)
		require.Equal(t, domain.ReasonDestinationAccessDenied, res.Reason)
		require.NotEmpty(t, res.Excerpt)
	})
	t.Run("changed again: a new window", func(t *testing.T) {
		w, now, r := setup(t)
		*now = start.Add(time.Hour)
		require.Equal(t, sender.Dead, w.send(t, r).Outcome)
		r.Destination.ChangedAt = *now
		*now = now.Add(RefusedFor)
		retried(t, w.send(t, r), "sts:AccessDenied", "not authorized")
	})
	t.Run("no change time: no window", func(t *testing.T) {
		w, _, r := setup(t)
		r.Destination.ChangedAt = time.Time{}
		require.Equal(t, domain.ReasonDestinationRoleRefused, w.send(t, r).Reason)
	})
	t.Run("not IAM's: dead at once", func(t *testing.T) {
		w, _, r := setup(t)
		r.Destination.RoleARN = customerRole
		r.Destination.ARN = strings.Replace(queueARN, "orders", "gone", 1)
		w.sts.AddRole(stsfake.Role{ARN: customerRole, Trusted: []string{deliverRole}, ExternalID: externalID, Allow: map[string][]string{"sqs:SendMessage": {"*"}}})
		require.Equal(t, domain.ReasonDestinationNotFound, w.send(t, r).Reason)
	})
}
