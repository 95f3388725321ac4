package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/apigw"
)

const wantCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors "

func consoleServer(ancestors []string) http.Handler {
	files := fstest.MapFS{
		"index.html":     {Data: []byte("<!doctype html><title>console</title>")},
		"app.js":         {Data: []byte("'use strict';")},
		"app.css":        {Data: []byte("body{}")},
		"notes.txt":      {Data: []byte("not served: no known type")},
		"sub/index.html": {Data: []byte("nested")},
	}
	hello := fstest.MapFS{"index.html": {Data: []byte("<p>hello</p>")}}
	s := &api.Server{Console: files, ConsoleHello: hello, FrameAncestors: ancestors}
	return s.Handler()
}

func getConsole(h http.Handler, method, target string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec
}

func TestConsoleServesItsFiles(t *testing.T) {
	t.Parallel()
	h := consoleServer(nil)
	for _, tc := range []struct{ target, ctype, body string }{
		{"/console/", "text/html; charset=utf-8", "<!doctype html><title>console</title>"},
		{"/console/index.html", "text/html; charset=utf-8", "<!doctype html><title>console</title>"},
		{"/console/app.js", "text/javascript; charset=utf-8", "'use strict';"},
		{"/console/app.css", "text/css; charset=utf-8", "body{}"},
		{"/console-hello/", "text/html; charset=utf-8", "<p>hello</p>"},
		{"/console-hello", "text/html; charset=utf-8", "<p>hello</p>"},
	} {
		t.Run(tc.target, func(t *testing.T) {
			rec := getConsole(h, "GET", tc.target)
			require.Equal(t, http.StatusOK, rec.Code)
			require.Equal(t, tc.ctype, rec.Header().Get("Content-Type"))
			require.Equal(t, tc.body, rec.Body.String())
			require.Equal(t, wantCSP+"'none'", rec.Header().Get("Content-Security-Policy"))
			require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
			require.Equal(t, "no-referrer", rec.Header().Get("Referrer-Policy"))
			require.Equal(t, "DENY", rec.Header().Get("X-Frame-Options"))
			require.Equal(t, "no-cache", rec.Header().Get("Cache-Control"))
		})
	}
}

func TestConsoleRedirectsToItsPage(t *testing.T) {
	t.Parallel()
	rec := getConsole(consoleServer(nil), "GET", "/console")
	require.Equal(t, http.StatusMovedPermanently, rec.Code)
	require.Equal(t, "/console/index.html", rec.Header().Get("Location"))

	// On the local cloud, under its /_aws/execute-api/{apiId} prefix: a
	// request to /console/ arrives as /console there, so the redirect is to
	// the page itself, never to the directory (which would loop).
	ev := events.APIGatewayV2HTTPRequest{RawPath: "/console", Headers: map[string]string{"host": "127.0.0.1:4566"}}
	ev.RequestContext.HTTP.Method = "GET"
	ev.RequestContext.APIID, ev.RequestContext.DomainName = "abc123", "abc123.execute-api.localhost"
	resp, err := apigw.Handler(consoleServer(nil))(context.Background(), ev)
	require.NoError(t, err)
	require.Equal(t, http.StatusMovedPermanently, resp.StatusCode)
	require.Equal(t, "/_aws/execute-api/abc123/console/index.html", resp.Headers["Location"])
}

func TestConsoleFrameAncestors(t *testing.T) {
	t.Parallel()
	rec := getConsole(consoleServer([]string{"'self'"}), "GET", "/console/")
	require.Equal(t, wantCSP+"'self'", rec.Header().Get("Content-Security-Policy"))
	require.Equal(t, "SAMEORIGIN", rec.Header().Get("X-Frame-Options"))

	rec = getConsole(consoleServer([]string{"'self'", "https://app.example.com"}), "GET", "/console/")
	require.Equal(t, wantCSP+"'self' https://app.example.com", rec.Header().Get("Content-Security-Policy"))
	require.Empty(t, rec.Header().Values("X-Frame-Options"), "X-Frame-Options cannot name an origin")
}

func TestConsoleRefusesWhatItDoesNotServe(t *testing.T) {
	t.Parallel()
	h := consoleServer(nil)
	for _, target := range []string{
		"/console/missing.js",
		"/console/notes.txt",       // no known type
		"/console/sub",             // a directory: never listed
		"/console/sub/",            // unclean, and a directory
		"/console/sub/index.html",  // only the root's files
		"/console/..%2Fapi.go",     // traversal, escaped
		"/console/%2e%2e",          // "..", escaped
		"/console/../v1/endpoints", // unclean
		"/console/%5C..%5Capp.js",  // backslashes
		"/console//app.js",
		"/console-hello/index2.html",
	} {
		t.Run(target, func(t *testing.T) {
			rec := getConsole(h, "GET", target)
			require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
			require.Equal(t, "application/problem+json", rec.Header().Get("Content-Type"))
			require.NotContains(t, rec.Body.String(), "nested")
		})
	}
}

func TestConsoleTakesGETOnly(t *testing.T) {
	t.Parallel()
	h := consoleServer(nil)
	for _, target := range []string{"/console", "/console/", "/console/app.js", "/console-hello/", "/console-hello"} {
		rec := getConsole(h, "POST", target)
		require.Equal(t, http.StatusMethodNotAllowed, rec.Code, target)
		require.Equal(t, "GET, HEAD", rec.Header().Get("Allow"))
	}
	rec := getConsole(h, "HEAD", "/console/app.js")
	require.Equal(t, http.StatusOK, rec.Code)
	require.Empty(t, rec.Body.String())
}

// The embedded console is what a Server without Console serves.
func TestConsoleDefaultsToTheEmbeddedAssets(t *testing.T) {
	t.Parallel()
	h := (&api.Server{}).Handler()
	for _, target := range []string{"/console/", "/console/app.js", "/console/app.css", "/console-hello/"} {
		rec := getConsole(h, "GET", target)
		require.Equal(t, http.StatusOK, rec.Code, target)
		require.NotEmpty(t, rec.Body.String())
	}
	require.True(t, strings.HasPrefix(getConsole(h, "GET", "/console/").Header().Get("Content-Type"), "text/html"))
}
