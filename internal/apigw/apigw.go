package apigw

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// Details of the problem responses Handler sends.
const (
	detailBadBase64 = "request body is not valid base64"
	detailBadMethod = "request method is not valid"
	detailBadURL    = "request path or query is not valid"
	detailInternal  = "internal error"
)

// requestError is an event that cannot be turned into an *http.Request. Its
// detail is safe to show to the client.
type requestError struct {
	detail string
	err    error
}

func (e *requestError) Error() string {
	if e.err == nil {
		return "apigw: " + e.detail
	}
	return "apigw: " + e.detail + ": " + e.err.Error()
}

func (e *requestError) Unwrap() error { return e.err }

// Handler adapts h to a Lambda handler for API Gateway HTTP API payload 2.0
// events. The returned function never returns an error: an event that cannot
// be turned into a request is answered 400, and a panic in h is answered 500,
// both with an application/problem+json body. It panics if h is nil.
func Handler(h http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	if h == nil {
		panic("apigw: nil handler")
	}
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		req, err := Request(ctx, ev)
		if err != nil {
			detail := "bad request"
			if re, ok := errors.AsType[*requestError](err); ok {
				detail = re.detail
			}
			return problem(http.StatusBadRequest, detail), nil
		}
		return serve(h, req), nil
	}
}

// serve runs h on req and converts what it wrote, or a panic, to a response.
func serve(h http.Handler, req *http.Request) (resp events.APIGatewayV2HTTPResponse) {
	defer func() {
		if v := recover(); v != nil {
			slog.ErrorContext(req.Context(), "apigw: handler panicked",
				"method", req.Method, "path", req.URL.Path,
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			resp = problem(http.StatusInternalServerError, detailInternal)
		}
	}()
	w := &responseWriter{header: make(http.Header)}
	h.ServeHTTP(w, req)
	return w.response()
}

// Request converts a payload 2.0 event to an *http.Request carrying ctx (see
// the package documentation for the mapping). It fails if the method is not
// an HTTP token, if the path or query cannot be parsed, or if a base64 body
// is not valid base64.
func Request(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (*http.Request, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	method := ev.RequestContext.HTTP.Method
	if !isToken(method) {
		return nil, &requestError{detail: detailBadMethod}
	}
	u, requestURI, err := requestURL(ev)
	if err != nil {
		return nil, err
	}
	body := []byte(ev.Body)
	if ev.IsBase64Encoded {
		body, err = base64.StdEncoding.DecodeString(ev.Body)
		if err != nil {
			return nil, &requestError{detail: detailBadBase64, err: err}
		}
	}
	header, host := requestHeader(ev)
	proto := ev.RequestContext.HTTP.Protocol
	major, minor, ok := http.ParseHTTPVersion(proto)
	if !ok {
		proto, major, minor = "HTTP/1.1", 1, 1
	}

	req := &http.Request{
		Method:        method,
		URL:           u,
		Proto:         proto,
		ProtoMajor:    major,
		ProtoMinor:    minor,
		Header:        header,
		Body:          http.NoBody,
		ContentLength: int64(len(body)),
		Host:          host,
		RemoteAddr:    ev.RequestContext.HTTP.SourceIP,
		RequestURI:    requestURI,
	}
	if len(body) > 0 {
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	return req.WithContext(context.WithValue(ctx, eventContextKey{}, ev.RequestContext)), nil
}

type eventContextKey struct{}

// EventContext is the requestContext of the event a request made by Request
// came from (its API id, domain name, stage), and whether there is one.
func EventContext(ctx context.Context) (events.APIGatewayV2HTTPRequestContext, bool) {
	rc, ok := ctx.Value(eventContextKey{}).(events.APIGatewayV2HTTPRequestContext)
	return rc, ok
}

// requestURL is the event's URL and request URI: its raw path (or, without
// one, its context's path, or "/") and its raw query string.
func requestURL(ev events.APIGatewayV2HTTPRequest) (*url.URL, string, error) {
	path := ev.RawPath
	if path == "" {
		path = ev.RequestContext.HTTP.Path
	}
	if path == "" {
		path = "/"
	}
	if path[0] != '/' || strings.ContainsRune(path, '?') {
		return nil, "", &requestError{detail: detailBadURL}
	}
	requestURI := path
	if ev.RawQueryString != "" {
		if _, err := url.QueryUnescape(ev.RawQueryString); err != nil {
			return nil, "", &requestError{detail: detailBadURL, err: err}
		}
		requestURI += "?" + ev.RawQueryString
	}
	u, err := url.ParseRequestURI(requestURI)
	if err != nil {
		return nil, "", &requestError{detail: detailBadURL, err: err}
	}
	return u, requestURI, nil
}

// requestHeader is the event's header, its cookies joined into one Cookie
// header, and the host (the Host header's, else the context's domain name),
// which the header no longer holds.
func requestHeader(ev events.APIGatewayV2HTTPRequest) (http.Header, string) {
	header := make(http.Header, len(ev.Headers)+1)
	for name, value := range ev.Headers {
		header.Set(name, value)
	}
	if len(ev.Cookies) > 0 {
		header.Set("Cookie", strings.Join(ev.Cookies, "; "))
	}
	host := header.Get("Host")
	if host == "" {
		host = ev.RequestContext.DomainName
	}
	header.Del("Host")
	return header, host
}

// isToken reports whether s is a non-empty RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// responseWriter records a response in memory.
type responseWriter struct {
	header http.Header // what the handler edits
	sent   http.Header // header as it stood when the status was written
	status int         // 0 until the status is written
	body   bytes.Buffer
}

func (w *responseWriter) Header() http.Header { return w.header }

// WriteHeader records the first final status; informational (1xx) statuses
// cannot be relayed through API Gateway and are ignored. Like net/http, it
// panics on a code outside 100-999.
func (w *responseWriter) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("apigw: invalid WriteHeader code %d", code))
	}
	if w.status != 0 || code < 200 {
		return
	}
	w.status = code
	w.sent = w.header.Clone()
}

func (w *responseWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

func (w *responseWriter) WriteString(s string) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.WriteString(s)
}

// Flush commits the status; the body is sent when the handler returns.
func (w *responseWriter) Flush() { w.WriteHeader(http.StatusOK) }

// response converts what was written to a payload 2.0 response.
func (w *responseWriter) response() events.APIGatewayV2HTTPResponse {
	w.WriteHeader(http.StatusOK)
	resp := events.APIGatewayV2HTTPResponse{
		StatusCode: w.status,
		Headers:    make(map[string]string, len(w.sent)),
	}
	names := make([]string, 0, len(w.sent))
	for name := range w.sent {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		values := w.sent[name]
		if len(values) == 0 {
			continue
		}
		key := http.CanonicalHeaderKey(name)
		if key == "Set-Cookie" {
			resp.Cookies = append(resp.Cookies, values...)
			continue
		}
		joined := strings.Join(values, ", ")
		if prev, ok := resp.Headers[key]; ok {
			joined = prev + ", " + joined
		}
		resp.Headers[key] = joined
	}

	body := w.body.Bytes()
	if textual(resp.Headers["Content-Type"]) && utf8.Valid(body) {
		resp.Body = string(body)
	} else {
		resp.Body = base64.StdEncoding.EncodeToString(body)
		resp.IsBase64Encoded = true
	}
	return resp
}

// textual reports whether a body of media type ct is sent as a plain string
// (provided it is valid UTF-8). An empty ct counts as textual.
func textual(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	switch {
	case mt == "", strings.HasPrefix(mt, "text/"):
		return true
	case mt == "application/json", mt == "application/xml", mt == "application/javascript":
		return true
	case strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"):
		return true
	}
	return false
}

// problemDoc is an RFC 9457 problem details document.
type problemDoc struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
}

// problem returns a problem+json response with the given status and detail.
func problem(status int, detail string) events.APIGatewayV2HTTPResponse {
	body, err := json.Marshal(problemDoc{
		Type:   "about:blank",
		Title:  http.StatusText(status),
		Status: status,
		Detail: detail,
	})
	if err != nil { // cannot happen: the document is strings and an int
		body = []byte(`{"type":"about:blank"}`)
	}
	return events.APIGatewayV2HTTPResponse{
		StatusCode: status,
		Headers:    map[string]string{"Content-Type": "application/problem+json"},
		Body:       string(body),
	}
}
