package apigw_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/apigw"
)

// sampleEvent is a payload 2.0 event as API Gateway HTTP API sends it to
// Lambda ($default stage, default route).
const sampleEvent = `{
  "version": "2.0",
  "routeKey": "$default",
  "rawPath": "/v1/endpoints/ep_123/deliveries",
  "rawQueryString": "limit=10&cursor=abc%2Fdef&status=failed&status=pending",
  "cookies": ["session=s3cr3t", "theme=dark"],
  "headers": {
    "accept": "application/json",
    "accept-encoding": "gzip, deflate, br",
    "authorization": "Bearer tok_abc",
    "content-length": "27",
    "content-type": "application/json",
    "host": "api.hookline.example",
    "user-agent": "curl/8.5.0",
    "x-amzn-trace-id": "Root=1-65f1c2a4-0123456789abcdef01234567",
    "x-forwarded-for": "203.0.113.7",
    "x-forwarded-port": "443",
    "x-forwarded-proto": "https",
    "x-multi": "one,two"
  },
  "queryStringParameters": {
    "cursor": "abc/def",
    "limit": "10",
    "status": "failed,pending"
  },
  "requestContext": {
    "accountId": "123456789012",
    "apiId": "a1b2c3d4e5",
    "domainName": "a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com",
    "domainPrefix": "a1b2c3d4e5",
    "http": {
      "method": "POST",
      "path": "/v1/endpoints/ep_123/deliveries",
      "protocol": "HTTP/1.1",
      "sourceIp": "203.0.113.7",
      "userAgent": "curl/8.5.0"
    },
    "requestId": "JKJaXmPLvHcESHA=",
    "routeKey": "$default",
    "stage": "$default",
    "time": "13/Mar/2026:10:15:42 +0000",
    "timeEpoch": 1773396942000
  },
  "isBase64Encoded": false,
  "body": "{\"url\":\"https://x.example\"}"
}`

func sample(t testing.TB) events.APIGatewayV2HTTPRequest {
	t.Helper()
	var ev events.APIGatewayV2HTTPRequest
	require.NoError(t, json.Unmarshal([]byte(sampleEvent), &ev))
	return ev
}

// seen is what the echo handler reports about the request it got.
type seen struct {
	Method        string              `json:"method"`
	Path          string              `json:"path"`
	EscapedPath   string              `json:"escapedPath"`
	RawQuery      string              `json:"rawQuery"`
	Query         map[string][]string `json:"query"`
	RequestURI    string              `json:"requestURI"`
	Host          string              `json:"host"`
	RemoteAddr    string              `json:"remoteAddr"`
	Proto         string              `json:"proto"`
	Header        http.Header         `json:"header"`
	Cookies       map[string]string   `json:"cookies"`
	Body          []byte              `json:"body"`
	ContentLength int64               `json:"contentLength"`
	CtxValue      string              `json:"ctxValue"`
}

type ctxKey struct{}

// echo answers 200 with a JSON description of the request.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		panic(err)
	}
	s := seen{
		Method:        r.Method,
		Path:          r.URL.Path,
		EscapedPath:   r.URL.EscapedPath(),
		RawQuery:      r.URL.RawQuery,
		Query:         r.URL.Query(),
		RequestURI:    r.RequestURI,
		Host:          r.Host,
		RemoteAddr:    r.RemoteAddr,
		Proto:         r.Proto,
		Header:        r.Header,
		Cookies:       map[string]string{},
		Body:          body,
		ContentLength: r.ContentLength,
	}
	s.CtxValue, _ = r.Context().Value(ctxKey{}).(string)
	for _, c := range r.Cookies() {
		s.Cookies[c.Name] = c.Value
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(s); err != nil {
		panic(err)
	}
})

func invoke(t *testing.T, h http.Handler, ev events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPResponse {
	t.Helper()
	ctx := context.WithValue(t.Context(), ctxKey{}, "invocation")
	resp, err := apigw.Handler(h)(ctx, ev)
	require.NoError(t, err)
	return resp
}

func echoed(t *testing.T, ev events.APIGatewayV2HTTPRequest) seen {
	t.Helper()
	resp := invoke(t, echo, ev)
	require.Equal(t, http.StatusOK, resp.StatusCode, resp.Body)
	require.False(t, resp.IsBase64Encoded)
	require.Equal(t, "application/json", resp.Headers["Content-Type"])
	var s seen
	require.NoError(t, json.Unmarshal([]byte(resp.Body), &s))
	return s
}

func TestHandlerRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		edit  func(*events.APIGatewayV2HTTPRequest)
		check func(*testing.T, seen)
	}{
		{
			name: "sample event",
			check: func(t *testing.T, s seen) {
				require.Equal(t, "POST", s.Method)
				require.Equal(t, "/v1/endpoints/ep_123/deliveries", s.Path)
				require.Equal(t, "limit=10&cursor=abc%2Fdef&status=failed&status=pending", s.RawQuery)
				require.Equal(t, map[string][]string{
					"limit":  {"10"},
					"cursor": {"abc/def"},
					"status": {"failed", "pending"},
				}, s.Query)
				require.Equal(t, "/v1/endpoints/ep_123/deliveries?limit=10&cursor=abc%2Fdef&status=failed&status=pending", s.RequestURI)
				require.Equal(t, "api.hookline.example", s.Host)
				require.Equal(t, "203.0.113.7", s.RemoteAddr)
				require.Equal(t, "HTTP/1.1", s.Proto)
				require.Equal(t, `{"url":"https://x.example"}`, string(s.Body))
				require.Equal(t, int64(27), s.ContentLength)
				require.Equal(t, "invocation", s.CtxValue)
			},
		},
		{
			name: "headers are canonical, single valued and host is promoted",
			check: func(t *testing.T, s seen) {
				require.Equal(t, []string{"Bearer tok_abc"}, s.Header["Authorization"])
				require.Equal(t, []string{"application/json"}, s.Header["Content-Type"])
				require.Equal(t, []string{"one,two"}, s.Header["X-Multi"])
				require.Equal(t, []string{"gzip, deflate, br"}, s.Header["Accept-Encoding"])
				require.Equal(t, []string{"Root=1-65f1c2a4-0123456789abcdef01234567"}, s.Header["X-Amzn-Trace-Id"])
				require.NotContains(t, s.Header, "Host")
				require.NotContains(t, s.Header, "host")
			},
		},
		{
			name: "cookies become one Cookie header",
			check: func(t *testing.T, s seen) {
				require.Equal(t, []string{"session=s3cr3t; theme=dark"}, s.Header["Cookie"])
				require.Equal(t, map[string]string{"session": "s3cr3t", "theme": "dark"}, s.Cookies)
			},
		},
		{
			name: "no cookies, no Cookie header",
			edit: func(ev *events.APIGatewayV2HTTPRequest) { ev.Cookies = nil },
			check: func(t *testing.T, s seen) {
				require.NotContains(t, s.Header, "Cookie")
				require.Empty(t, s.Cookies)
			},
		},
		{
			name: "method",
			edit: func(ev *events.APIGatewayV2HTTPRequest) { ev.RequestContext.HTTP.Method = "DELETE" },
			check: func(t *testing.T, s seen) {
				require.Equal(t, "DELETE", s.Method)
			},
		},
		{
			name: "escaped path is kept raw",
			edit: func(ev *events.APIGatewayV2HTTPRequest) { ev.RawPath = "/v1/a%2Fb/c%20d" },
			check: func(t *testing.T, s seen) {
				require.Equal(t, "/v1/a/b/c d", s.Path)
				require.Equal(t, "/v1/a%2Fb/c%20d", s.EscapedPath)
			},
		},
		{
			// Not cleaned: the API answers an unclean path 404 itself,
			// where http.ServeMux would redirect.
			name: "unclean path is kept as it came",
			edit: func(ev *events.APIGatewayV2HTTPRequest) { ev.RawPath = "//v1/./endpoints/" },
			check: func(t *testing.T, s seen) {
				require.Equal(t, "//v1/./endpoints/", s.Path)
				require.Equal(t, "//v1/./endpoints/", s.EscapedPath)
			},
		},
		{
			name: "path falls back to requestContext.http.path",
			edit: func(ev *events.APIGatewayV2HTTPRequest) {
				ev.RawPath = ""
				ev.RequestContext.HTTP.Path = "/fallback"
			},
			check: func(t *testing.T, s seen) {
				require.Equal(t, "/fallback", s.Path)
			},
		},
		{
			name: "no path at all is /",
			edit: func(ev *events.APIGatewayV2HTTPRequest) {
				ev.RawPath = ""
				ev.RequestContext.HTTP.Path = ""
				ev.RawQueryString = ""
			},
			check: func(t *testing.T, s seen) {
				require.Equal(t, "/", s.Path)
				require.Equal(t, "/", s.RequestURI)
			},
		},
		{
			name: "no query",
			edit: func(ev *events.APIGatewayV2HTTPRequest) { ev.RawQueryString = "" },
			check: func(t *testing.T, s seen) {
				require.Empty(t, s.RawQuery)
				require.Equal(t, "/v1/endpoints/ep_123/deliveries", s.RequestURI)
			},
		},
		{
			name: "host falls back to domainName",
			edit: func(ev *events.APIGatewayV2HTTPRequest) { delete(ev.Headers, "host") },
			check: func(t *testing.T, s seen) {
				require.Equal(t, "a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com", s.Host)
			},
		},
		{
			name: "base64 body is decoded",
			edit: func(ev *events.APIGatewayV2HTTPRequest) {
				ev.Body = base64.StdEncoding.EncodeToString([]byte{0x00, 0xff, 0xfe, 'h', 'i'})
				ev.IsBase64Encoded = true
			},
			check: func(t *testing.T, s seen) {
				require.Equal(t, []byte{0x00, 0xff, 0xfe, 'h', 'i'}, s.Body)
				require.Equal(t, int64(5), s.ContentLength)
			},
		},
		{
			name: "empty body",
			edit: func(ev *events.APIGatewayV2HTTPRequest) {
				ev.RequestContext.HTTP.Method = "GET"
				ev.Body = ""
			},
			check: func(t *testing.T, s seen) {
				require.Empty(t, s.Body)
				require.Zero(t, s.ContentLength)
			},
		},
		{
			name: "unknown protocol defaults to HTTP/1.1",
			edit: func(ev *events.APIGatewayV2HTTPRequest) { ev.RequestContext.HTTP.Protocol = "" },
			check: func(t *testing.T, s seen) {
				require.Equal(t, "HTTP/1.1", s.Proto)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := sample(t)
			if tt.edit != nil {
				tt.edit(&ev)
			}
			tt.check(t, echoed(t, ev))
		})
	}
}

func TestHandlerBadRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		edit   func(*events.APIGatewayV2HTTPRequest)
		detail string
	}{
		{
			name: "bad base64 body",
			edit: func(ev *events.APIGatewayV2HTTPRequest) {
				ev.Body = "not base64!"
				ev.IsBase64Encoded = true
			},
			detail: "request body is not valid base64",
		},
		{
			name:   "bad path escape",
			edit:   func(ev *events.APIGatewayV2HTTPRequest) { ev.RawPath = "/v1/%zz" },
			detail: "request path or query is not valid",
		},
		{
			name:   "bad query escape",
			edit:   func(ev *events.APIGatewayV2HTTPRequest) { ev.RawQueryString = "a=%zz" },
			detail: "request path or query is not valid",
		},
		{
			name:   "control character in path",
			edit:   func(ev *events.APIGatewayV2HTTPRequest) { ev.RawPath = "/v1/\n" },
			detail: "request path or query is not valid",
		},
		{
			name:   "relative path",
			edit:   func(ev *events.APIGatewayV2HTTPRequest) { ev.RawPath = "v1/endpoints" },
			detail: "request path or query is not valid",
		},
		{
			name:   "absolute URL as path",
			edit:   func(ev *events.APIGatewayV2HTTPRequest) { ev.RawPath = "http://evil.example/x" },
			detail: "request path or query is not valid",
		},
		{
			name:   "question mark in path",
			edit:   func(ev *events.APIGatewayV2HTTPRequest) { ev.RawPath = "/a?b" },
			detail: "request path or query is not valid",
		},
		{
			name:   "bad method",
			edit:   func(ev *events.APIGatewayV2HTTPRequest) { ev.RequestContext.HTTP.Method = "GE T" },
			detail: "request method is not valid",
		},
		{
			name:   "missing method",
			edit:   func(ev *events.APIGatewayV2HTTPRequest) { ev.RequestContext.HTTP.Method = "" },
			detail: "request method is not valid",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := sample(t)
			tt.edit(&ev)
			called := false
			resp := invoke(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }), ev)
			require.False(t, called)
			require.Equal(t, http.StatusBadRequest, resp.StatusCode)
			require.Equal(t, map[string]string{"Content-Type": "application/problem+json"}, resp.Headers)
			require.False(t, resp.IsBase64Encoded)
			require.JSONEq(t, `{"type":"about:blank","title":"Bad Request","status":400,"detail":"`+tt.detail+`"}`, resp.Body)

			_, err := apigw.Request(t.Context(), ev)
			require.Error(t, err)
		})
	}
}

func TestHandlerBadBase64ExactBody(t *testing.T) {
	t.Parallel()
	ev := sample(t)
	ev.Body, ev.IsBase64Encoded = "%%%", true
	resp := invoke(t, echo, ev)
	require.Equal(t, `{"type":"about:blank","title":"Bad Request","status":400,"detail":"request body is not valid base64"}`, resp.Body)
}

func TestHandlerResponse(t *testing.T) {
	t.Parallel()
	binary := []byte{0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    events.APIGatewayV2HTTPResponse
	}{
		{
			name:    "status defaults to 200 when nothing is written",
			handler: func(http.ResponseWriter, *http.Request) {},
			want:    events.APIGatewayV2HTTPResponse{StatusCode: 200, Headers: map[string]string{}},
		},
		{
			name: "header set without writing keeps status 200",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("X-Request-Id", "r1")
			},
			want: events.APIGatewayV2HTTPResponse{StatusCode: 200, Headers: map[string]string{"X-Request-Id": "r1"}},
		},
		{
			name: "write without WriteHeader is 200",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, "hello")
			},
			want: events.APIGatewayV2HTTPResponse{StatusCode: 200, Headers: map[string]string{}, Body: "hello"},
		},
		{
			name: "explicit status, first one wins, later headers ignored",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Location", "/v1/endpoints/ep_1")
				w.WriteHeader(http.StatusCreated)
				w.WriteHeader(http.StatusTeapot)
				w.Header().Set("X-Late", "ignored")
				_, _ = w.Write([]byte(`{"id":"ep_1"}`))
			},
			want: events.APIGatewayV2HTTPResponse{
				StatusCode: 201,
				Headers:    map[string]string{"Content-Type": "application/json", "Location": "/v1/endpoints/ep_1"},
				Body:       `{"id":"ep_1"}`,
			},
		},
		{
			name: "informational status is ignored",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusEarlyHints)
				w.WriteHeader(http.StatusAccepted)
			},
			want: events.APIGatewayV2HTTPResponse{StatusCode: 202, Headers: map[string]string{}},
		},
		{
			name: "multi-value headers are joined, Set-Cookie goes to cookies",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Add("Vary", "Accept")
				w.Header().Add("Vary", "Origin")
				w.Header().Set("Cache-Control", "no-store")
				http.SetCookie(w, &http.Cookie{Name: "a", Value: "1", Path: "/"})
				http.SetCookie(w, &http.Cookie{Name: "b", Value: "2", HttpOnly: true})
				w.WriteHeader(http.StatusNoContent)
			},
			want: events.APIGatewayV2HTTPResponse{
				StatusCode: 204,
				Headers:    map[string]string{"Vary": "Accept, Origin", "Cache-Control": "no-store"},
				Cookies:    []string{"a=1; Path=/", "b=2; HttpOnly"},
			},
		},
		{
			name: "non-canonical header names are merged",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header()["x-thing"] = []string{"b"}
				w.Header()["X-Thing"] = []string{"a"}
				w.Header()["set-cookie"] = []string{"c=3"}
			},
			want: events.APIGatewayV2HTTPResponse{
				StatusCode: 200,
				Headers:    map[string]string{"X-Thing": "a, b"},
				Cookies:    []string{"c=3"},
			},
		},
		{
			name: "binary response is base64",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "image/png")
				_, _ = w.Write(binary)
			},
			want: events.APIGatewayV2HTTPResponse{
				StatusCode:      200,
				Headers:         map[string]string{"Content-Type": "image/png"},
				Body:            base64.StdEncoding.EncodeToString(binary),
				IsBase64Encoded: true,
			},
		},
		{
			name: "octet-stream is base64 even if it is ASCII",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/octet-stream")
				_, _ = w.Write([]byte("abc"))
			},
			want: events.APIGatewayV2HTTPResponse{
				StatusCode:      200,
				Headers:         map[string]string{"Content-Type": "application/octet-stream"},
				Body:            "YWJj",
				IsBase64Encoded: true,
			},
		},
		{
			name: "no content type and binary body is base64",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				_, _ = w.Write(binary)
			},
			want: events.APIGatewayV2HTTPResponse{
				StatusCode:      200,
				Headers:         map[string]string{},
				Body:            base64.StdEncoding.EncodeToString(binary),
				IsBase64Encoded: true,
			},
		},
		{
			name: "textual type with invalid UTF-8 is base64",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/plain; charset=latin1")
				_, _ = w.Write([]byte{'c', 'a', 'f', 0xe9})
			},
			want: events.APIGatewayV2HTTPResponse{
				StatusCode:      200,
				Headers:         map[string]string{"Content-Type": "text/plain; charset=latin1"},
				Body:            base64.StdEncoding.EncodeToString([]byte{'c', 'a', 'f', 0xe9}),
				IsBase64Encoded: true,
			},
		},
		{
			name: "handler's own problem+json is plain",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte(`{"status":404}`))
			},
			want: events.APIGatewayV2HTTPResponse{
				StatusCode: 404,
				Headers:    map[string]string{"Content-Type": "application/problem+json"},
				Body:       `{"status":404}`,
			},
		},
		{
			name: "flush commits the status and headers",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				require.NoError(t, http.NewResponseController(w).Flush())
				w.Header().Set("X-Late", "ignored")
				w.WriteHeader(http.StatusTeapot)
				_, _ = io.WriteString(w, "data: x\n\n")
			},
			want: events.APIGatewayV2HTTPResponse{
				StatusCode: 200,
				Headers:    map[string]string{"Content-Type": "text/event-stream"},
				Body:       "data: x\n\n",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, invoke(t, tt.handler, sample(t)))
		})
	}
}

func TestHandlerBodyEncodingByContentType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		contentType string
		base64      bool
	}{
		{"", false},
		{"text/plain; charset=utf-8", false},
		{"text/html", false},
		{"TEXT/CSV", false},
		{"application/json", false},
		{"application/json; charset=utf-8", false},
		{"application/problem+json", false},
		{"application/vnd.api+json", false},
		{"application/xml", false},
		{"application/javascript", false},
		{"application/octet-stream", true},
		{"application/pdf", true},
		{"image/svg+xml", true},
		{"application/x-www-form-urlencoded", true},
	}
	for _, tt := range tests {
		t.Run(tt.contentType, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if tt.contentType != "" {
					w.Header().Set("Content-Type", tt.contentType)
				}
				_, _ = io.WriteString(w, "héllo")
			})
			resp := invoke(t, h, sample(t))
			require.Equal(t, tt.base64, resp.IsBase64Encoded)
			if tt.base64 {
				require.Equal(t, base64.StdEncoding.EncodeToString([]byte("héllo")), resp.Body)
			} else {
				require.Equal(t, "héllo", resp.Body)
			}
		})
	}
}

func TestHandlerPanic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"string", func(http.ResponseWriter, *http.Request) { panic("db password is hunter2") }},
		{"error", func(http.ResponseWriter, *http.Request) { panic(io.ErrUnexpectedEOF) }},
		{"nil", func(http.ResponseWriter, *http.Request) { panic(nil) }},
		{"abort handler", func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }},
		{"after partial write", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("X-Partial", "yes")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, "half a resp")
			panic("boom hunter2")
		}},
		{"invalid status code", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(42) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var resp events.APIGatewayV2HTTPResponse
			require.NotPanics(t, func() { resp = invoke(t, tt.handler, sample(t)) })
			require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
			require.Equal(t, map[string]string{"Content-Type": "application/problem+json"}, resp.Headers)
			require.Empty(t, resp.Cookies)
			require.False(t, resp.IsBase64Encoded)
			require.Equal(t, `{"type":"about:blank","title":"Internal Server Error","status":500,"detail":"internal error"}`, resp.Body)
			require.NotContains(t, resp.Body, "hunter2")
		})
	}
}

func TestHandlerNil(t *testing.T) {
	t.Parallel()
	require.Panics(t, func() { apigw.Handler(nil) })
}

func TestRequest(t *testing.T) {
	t.Parallel()
	ctx := context.WithValue(t.Context(), ctxKey{}, "v")
	req, err := apigw.Request(ctx, sample(t))
	require.NoError(t, err)
	require.Equal(t, "POST", req.Method)
	require.Equal(t, "/v1/endpoints/ep_123/deliveries", req.URL.Path)
	require.Empty(t, req.URL.Host)
	require.Equal(t, "10", req.URL.Query().Get("limit"))
	require.Equal(t, "api.hookline.example", req.Host)
	require.Equal(t, "203.0.113.7", req.RemoteAddr)
	require.Equal(t, "application/json", req.Header.Get("Content-Type"))
	require.Equal(t, int64(27), req.ContentLength)
	require.Equal(t, 1, req.ProtoMajor)
	require.Equal(t, 1, req.ProtoMinor)
	require.Equal(t, "v", req.Context().Value(ctxKey{}))
	body, err := io.ReadAll(req.Body)
	require.NoError(t, err)
	require.Equal(t, `{"url":"https://x.example"}`, string(body))

	ev := sample(t)
	ev.Body = ""
	req, err = apigw.Request(ctx, ev)
	require.NoError(t, err)
	require.Equal(t, http.NoBody, req.Body)
}

// FuzzRequest checks that Handler never panics and never returns an error,
// that every event is either answered 400 problem+json or reaches the
// handler, and that a body which reaches the handler arrives intact.
func FuzzRequest(f *testing.F) {
	f.Add("POST", "/v1/endpoints/ep_123/deliveries", "limit=10&cursor=abc%2Fdef", `{"url":"https://x.example"}`, false)
	f.Add("GET", "/", "", "", false)
	f.Add("PUT", "/a%2Fb/c%20d", "a=1&a=2;b", "AP/+", true)
	f.Add("POST", "/x", "", "not base64!", true)
	f.Add("GET", "/%zz", "a=%zz", "", false)
	f.Add("GE T", "relative", "a\n=1", "\xff\xfe", false)
	f.Add("", "", "", "", false)
	f.Add("OPTIONS", "//evil.example/x", "q=%E2%82%AC", "€", false)

	var gotBody []byte
	var called bool
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		called = true
		var err error
		gotBody, err = io.ReadAll(r.Body)
		if err != nil {
			panic(err)
		}
		_ = r.URL.Query()
		_ = r.Cookies()
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("X-Path", r.URL.Path)
		_, _ = w.Write(gotBody)
	})
	handle := apigw.Handler(h)
	base := sample(f)

	f.Fuzz(func(t *testing.T, method, rawPath, rawQuery, body string, isBase64 bool) {
		ev := base // Handler does not modify the shared maps and slices
		ev.RequestContext.HTTP.Method = method
		ev.RawPath = rawPath
		ev.RawQueryString = rawQuery
		ev.Body = body
		ev.IsBase64Encoded = isBase64
		called, gotBody = false, nil

		resp, err := handle(t.Context(), ev)
		require.NoError(t, err)
		if !called {
			require.Equal(t, http.StatusBadRequest, resp.StatusCode)
			require.Equal(t, "application/problem+json", resp.Headers["Content-Type"])
			require.True(t, utf8.ValidString(resp.Body))
			_, err := apigw.Request(t.Context(), ev)
			require.Error(t, err)
			return
		}
		require.Equal(t, http.StatusOK, resp.StatusCode)
		want := []byte(body)
		if isBase64 {
			want, err = base64.StdEncoding.DecodeString(body)
			require.NoError(t, err)
		}
		require.Equal(t, string(want), string(gotBody))
		echoed, err := base64.StdEncoding.DecodeString(resp.Body)
		require.NoError(t, err)
		require.Equal(t, string(want), string(echoed))
	})
}

func TestEventContextRidesOnTheRequest(t *testing.T) {
	t.Parallel()
	ev := events.APIGatewayV2HTTPRequest{RawPath: "/v1/x"}
	ev.RequestContext.HTTP.Method = "GET"
	ev.RequestContext.APIID = "abc123"
	ev.RequestContext.DomainName = "abc123.execute-api.localhost"
	ev.RequestContext.Stage = "$default"
	req, err := apigw.Request(context.Background(), ev)
	require.NoError(t, err)
	rc, ok := apigw.EventContext(req.Context())
	require.True(t, ok)
	require.Equal(t, "abc123", rc.APIID)
	require.Equal(t, "abc123.execute-api.localhost", rc.DomainName)
	_, ok = apigw.EventContext(context.Background())
	require.False(t, ok)
}
