package sender

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/netguard"
	"github.com/hookline/hookline/internal/retry"
	"github.com/hookline/hookline/internal/signing"
)

// Version names this build of hookline in the User-Agent header. The
// Makefile sets it with -ldflags "-X .../sender.Version=...".
var Version = "dev"

// userAgent names hookline and its version.
var userAgent = "hookline/" + Version

// ExcerptBytes is how much of a response body is kept for the attempt log.
const ExcerptBytes = 1024

// drainBytes is how much of a response body is read, so that a small body
// lets the connection be reused; a larger body closes the connection.
const drainBytes = 16 << 10

// MaxResponseHeaderBytes caps the response headers read from a receiver
// (Go's default is 10 MiB): a receiver that sends more gets a failed,
// retryable attempt ("response_headers_too_large"), and the deliver
// function's memory stays bounded whatever the receiver does.
const MaxResponseHeaderBytes = 64 << 10

// Outcome classifies an attempt.
type Outcome int

const (
	// Retry: the attempt failed in a way that may pass later.
	Retry Outcome = iota
	// Delivered: the endpoint answered 2xx.
	Delivered
	// Dead: retrying cannot help; Result.Reason says why.
	Dead
)

func (o Outcome) String() string {
	switch o {
	case Delivered:
		return "delivered"
	case Dead:
		return "dead"
	default:
		return "retry"
	}
}

// Result is what one attempt did.
type Result struct {
	Outcome Outcome
	// Status is the HTTP status, 0 when no response came.
	Status int
	// Error classifies a failure: "timeout", "dns", "connection_refused",
	// "connection_reset", "tls", "network", "forbidden_address",
	// "response_headers_too_large", "auth_token" (no OAuth 2.0 token),
	// "auth_certificate" (no usable client certificate), or
	// "http_<status>" for a non-2xx answer; for an AWS destination (package
	// destination), "<service>:<AWS error code>" such as
	// "sqs:QueueDoesNotExist". Empty when delivered.
	Error string
	// Reason, for Dead, is the dead-letter reason.
	Reason domain.DeadReason
	// RetryAfter is the receiver's Retry-After on 429 and 503, else 0.
	RetryAfter time.Duration
	// DisableEndpoint, when not empty, disables the endpoint for this
	// reason: on 410 Gone (the receiver asked to stop,
	// domain.DisabledEndpointGone), or an AWS destination's role that
	// accepts a wrong external ID (domain.DisabledRoleUnguarded).
	DisableEndpoint domain.DisableReason
	// Latency of the attempt, from sending to the end of the read.
	Latency time.Duration
	// Excerpt is the start of the response body, at most ExcerptBytes.
	Excerpt string
}

// Request is one attempt to send.
type Request struct {
	URL        string
	DeliveryID string
	EventID    string
	EventType  string
	Attempt    int
	Body       []byte
	Signer     *signing.Signer
	// Headers are the endpoint's custom headers. hookline's own headers are
	// set after them, so a custom header can never replace one.
	Headers map[string]string
	// Timeout, when positive, bounds this attempt instead of the client's
	// request timeout (the endpoint's own timeout).
	Timeout time.Duration
	// Destination, for an AWS destination, is where the message goes
	// instead of URL; nil for an HTTP endpoint.
	Destination *Destination
	// TraceParent is the attempt's W3C trace context (package trace),
	// sent as the traceparent header (an AWS destination: attribute or
	// detail field). Empty: none is sent.
	TraceParent string
	// Auth, when set, authenticates the request to the endpoint (auth.go):
	// its Authorization header (Basic, or an OAuth 2.0 bearer token), which
	// replaces a custom header of that name, or its client certificate.
	Auth *Auth
}

// Destination is an AWS destination's target as one attempt needs it.
type Destination struct {
	Type domain.EndpointType
	// ARN is the customer's queue, topic or bus.
	ARN string
	// RoleARN is the role assumed in the customer's account.
	RoleARN string
	// ExternalID is the endpoint's external ID, opened.
	ExternalID string
	// TenantID is the endpoint's tenant: its sessions are cached within
	// the tenant's share (destination.MaxRolesPerTenant).
	TenantID string
	// EndpointID names the endpoint's session (destination.SessionName:
	// hookline-<endpoint id>), so that the customer's CloudTrail tells
	// its endpoints apart. Empty: the session is hookline-delivery.
	EndpointID string
	// ChangedAt is when the endpoint was created or last changed
	// (domain.Endpoint.ChangedAt): a refusal that IAM's eventual
	// consistency explains (AssumeRole or the send denied) is retried
	// until destination.SettleFor after it, then dead. Zero: no window,
	// such a refusal is dead at once.
	ChangedAt time.Time
}

// ClientOptions configure NewHTTPClient.
type ClientOptions struct {
	// Guard refuses internal addresses at dial time. Required.
	Guard *netguard.Guard
	// ConnectTimeout bounds the TCP connect and the TLS handshake. Default 5 s.
	ConnectTimeout time.Duration
	// RequestTimeout bounds the whole attempt. Default 15 s.
	RequestTimeout time.Duration
}

// NewHTTPClient returns the client deliveries are sent with: guarded dialer,
// no proxy, no redirects, keep-alive connections.
func NewHTTPClient(o ClientOptions) *http.Client {
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = 5 * time.Second
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = domain.DefaultRequestTimeout
	}
	dialer := o.Guard.Dialer(net.Dialer{Timeout: o.ConnectTimeout, KeepAlive: 30 * time.Second})
	transport := &http.Transport{
		Proxy:                  nil, // a proxy would dial on our behalf, past the guard
		DialContext:            dialer.DialContext,
		TLSHandshakeTimeout:    o.ConnectTimeout,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    10,
		IdleConnTimeout:        90 * time.Second,
		ExpectContinueTimeout:  time.Second,
		ForceAttemptHTTP2:      true,
		MaxResponseHeaderBytes: MaxResponseHeaderBytes,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   o.RequestTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a 3xx is the answer, never followed
		},
	}
}

// Client sends attempts.
type Client struct {
	HTTP *http.Client
	// Now is the clock used for webhook-timestamp and the OAuth 2.0
	// tokens' expiry. Default time.Now.
	Now func() time.Time

	tokens tokens         // the endpoints' OAuth 2.0 tokens (auth.go)
	certs  certTransports // the endpoints' client-certificate transports (auth.go)
}

// Send makes one attempt and classifies it. It never returns an error: every
// failure is a Result.
func (c *Client) Send(ctx context.Context, r Request) Result {
	ts := c.now()
	if timeout := cmp.Or(max(r.Timeout, 0), c.HTTP.Timeout); timeout > 0 {
		// The endpoint's own timeout, else the client's; the caller's
		// context (the invocation's deadline) bounds both, and the token
		// fetch, when there is one, is within it.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	start := time.Now()
	// The transport, not http.Client.Do: a webhook is never redirected, so
	// the client's redirect machinery (a copy of every header per request)
	// is pure cost. The timeout is the context's.
	transport := c.baseTransport()
	var token string
	var fresh bool
	if a := r.Auth; a != nil {
		var err error
		switch a.Kind {
		case domain.AuthMTLS:
			transport, err = c.certTransport(a)
		case domain.AuthOAuth2:
			token, fresh, err = c.token(ctx, a, "")
		}
		if err != nil {
			return authFailure(a, err, start)
		}
	}
	resp, res, ok := c.roundTrip(ctx, transport, r, ts, token)
	if ok && resp.StatusCode == http.StatusUnauthorized && r.Auth != nil && r.Auth.Kind == domain.AuthOAuth2 && !fresh {
		// A kept token the receiver no longer takes (revoked, or its
		// clock ahead of ours): fetch one anew and send once more.
		drain(resp.Body)
		newToken, _, err := c.token(ctx, r.Auth, token)
		if err != nil {
			return authFailure(r.Auth, err, start)
		}
		resp, res, ok = c.roundTrip(ctx, transport, r, ts, newToken)
	}
	if !ok {
		res.Latency = time.Since(start)
		return res
	}
	excerpt, readErr := readExcerpt(resp.Body)
	resp.Body.Close()
	res = Classify(resp.StatusCode, resp.Header.Get("Retry-After"), ts)
	res.Latency = time.Since(start)
	res.Excerpt = excerpt
	if res.Outcome == Delivered && readErr != nil && !errors.Is(readErr, errBodyTooLarge) {
		// The status arrived; a body cut short does not undo a 2xx.
		res.Excerpt += " [body read failed]"
	}
	return res
}

// authFailure is an attempt that could not authenticate: no token
// ("auth_token") or no usable client certificate ("auth_certificate"),
// retried as a network failure is. Its excerpt says why, without a
// secret.
func authFailure(a *Auth, err error, start time.Time) Result {
	class := "auth_token"
	if a.Kind == domain.AuthMTLS {
		class = "auth_certificate"
	}
	return Result{Outcome: Retry, Error: class, Excerpt: err.Error(), Latency: time.Since(start)}
}

// roundTrip sends r once through transport, signed at ts, with token as
// its bearer token when not empty. ok is false when no response came:
// res says why.
func (c *Client) roundTrip(ctx context.Context, transport http.RoundTripper, r Request, ts time.Time, token string) (resp *http.Response, res Result, ok bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return nil, Result{Outcome: Dead, Error: "invalid_url", Reason: domain.ReasonInvalidURL}, false
	}
	setHeaders(req.Header, r, ts)
	switch {
	case token != "":
		req.Header["Authorization"] = []string{"Bearer " + token}
	case r.Auth != nil && r.Auth.Kind == domain.AuthBasic:
		req.SetBasicAuth(r.Auth.Username, r.Auth.Password)
	}
	resp, err = transport.RoundTrip(req)
	if err != nil {
		return nil, classifyError(err), false
	}
	return resp, Result{}, true
}

// drain reads a little of a body that is not kept and closes it, so that
// its connection may be reused.
func drain(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, drainBytes))
	body.Close()
}

// setHeaders sets the attempt's headers on h: the receiver's own first,
// those not domain.ReservedHeader, then the ones hookline owns, signed at ts.
func setHeaders(h http.Header, r Request, ts time.Time) {
	// One backing array for every header value: one allocation, not ten.
	v := [...]string{
		"application/json", userAgent, r.DeliveryID, strconv.FormatInt(ts.Unix(), 10),
		r.Signer.Sign(r.DeliveryID, ts, r.Body), strconv.Itoa(r.Attempt), r.EventID, r.EventType, r.TraceParent,
	}
	vals := v[:]
	for name, value := range r.Headers {
		if !domain.ReservedHeader(name) {
			h.Set(name, value)
		}
	}
	h["Content-Type"] = vals[0:1:1]
	h["User-Agent"] = vals[1:2:2]
	h[signing.HeaderID] = vals[2:3:3]
	h[signing.HeaderTimestamp] = vals[3:4:4]
	h[signing.HeaderSignature] = vals[4:5:5]
	h["Idempotency-Key"] = vals[2:3:3]
	h["X-Idempotency-Key"] = vals[2:3:3]
	h["X-Attempt"] = vals[5:6:6]
	h["X-Event-Id"] = vals[6:7:7]
	h["X-Event-Type"] = vals[7:8:8]
	if r.TraceParent != "" {
		h["traceparent"] = vals[8:9:9]
	}
}

var errBodyTooLarge = errors.New("response body larger than the read cap")

// excerptBufs hold the excerpt in their first half; the second half is
// scratch space for draining the rest of a body.
var excerptBufs = sync.Pool{New: func() any { return new([2 * ExcerptBytes]byte) }}

// readExcerpt reads up to drainBytes of body and returns the first
// ExcerptBytes as valid text.
func readExcerpt(body io.Reader) (string, error) {
	pooled := excerptBufs.Get().(*[2 * ExcerptBytes]byte)
	defer excerptBufs.Put(pooled)
	buf, scratch := pooled[:ExcerptBytes], pooled[ExcerptBytes:]
	// Not io.ReadFull: it turns a short body's io.EOF into
	// io.ErrUnexpectedEOF, the very error net/http returns for a body cut
	// short of its Content-Length, and the two must not be confused.
	n, total := 0, 0
	var err error
	for err == nil && total <= drainBytes {
		var m int
		if n < len(buf) {
			m, err = body.Read(buf[n:])
			n += m
		} else {
			m, err = body.Read(scratch) // past the excerpt: read to drain, keep nothing
		}
		total += m
	}
	excerpt := buf[:n]
	text := ""
	if n > 0 {
		if utf8.Valid(excerpt) {
			text = string(excerpt)
		} else {
			text = string(bytes.ToValidUTF8(excerpt, nil))
		}
	}
	switch {
	case err == io.EOF:
		return text, nil
	case err != nil:
		return text, err
	default:
		return text, errBodyTooLarge
	}
}

// Classify maps an HTTP answer to an outcome: 2xx delivered; 408, 429 and 5xx
// retry (with Retry-After honoured on 429 and 503); 410 dead and the endpoint
// disabled; 3xx and every other 4xx dead at once.
func Classify(status int, retryAfter string, now time.Time) Result {
	res := Result{Status: status}
	if status >= 200 && status < 300 {
		res.Outcome = Delivered
		return res
	}
	res.Error = "http_" + strconv.Itoa(status)
	switch {
	case status == http.StatusRequestTimeout, status == http.StatusTooManyRequests, status >= 500:
		res.Outcome = Retry
		if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
			if d, ok := retry.ParseRetryAfter(retryAfter, now); ok {
				res.RetryAfter = d
			}
		}
	case status == http.StatusGone:
		res.Outcome, res.Reason, res.DisableEndpoint = Dead, domain.ReasonEndpointGone, domain.DisabledEndpointGone
	case status >= 300 && status < 400:
		res.Outcome, res.Reason = Dead, domain.RedirectNotFollowed(status)
	default:
		res.Outcome, res.Reason = Dead, domain.Rejected(status)
	}
	return res
}

// classifyError maps a transport failure to an outcome. Only a refusal by the
// SSRF guard is dead; every network failure may pass and is retried.
func classifyError(err error) Result {
	res := Result{Outcome: Retry, Error: "network"}
	var dnsErr *net.DNSError
	var netErr net.Error
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.Is(err, netguard.ErrForbidden):
		res.Outcome, res.Error, res.Reason = Dead, "forbidden_address", domain.ReasonForbiddenAddress
	case errors.As(err, &dnsErr):
		res.Error = "dns"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		res.Error = "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		res.Error = "connection_refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		res.Error = "connection_reset"
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr), errors.As(err, &recordErr):
		res.Error = "tls"
	case strings.Contains(err.Error(), "response headers exceeded"):
		// net/http's own words for MaxResponseHeaderBytes; it has no typed error.
		res.Error = "response_headers_too_large"
	}
	return res
}
