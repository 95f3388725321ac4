package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

var page = fstest.MapFS{
	"app.js":     {Data: []byte(strings.Repeat("console.log(1);\n", 200))},
	"index.html": {Data: []byte("<!doctype html><title>x</title>")},
	"app.css":    {Data: []byte("body{margin:0}")},
}

// A page's weight is the sum of its files each gzipped, index.html first;
// served, it is the bodies the server answers at prefix/ and prefix/<file>.
func TestPageWeight(t *testing.T) {
	t.Parallel()
	names, err := pageFiles(page)
	require.NoError(t, err)
	require.Equal(t, []string{"index.html", "app.css", "app.js"}, names)

	w, err := embeddedWeight(page)
	require.NoError(t, err)
	want := gzipSize(page["index.html"].Data) + gzipSize(page["app.css"].Data) + gzipSize(page["app.js"].Data)
	require.Equal(t, want, w.gzipBytes)
	require.Less(t, gzipSize(page["app.js"].Data), len(page["app.js"].Data), "gzip shrinks a repetitive file")

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/p/":
			_, _ = w.Write(page["index.html"].Data)
		case "/p/app.js":
			_, _ = w.Write(page["app.js"].Data)
		case "/p/app.css":
			_, _ = w.Write([]byte("body{margin:0;padding:0;color:red}")) // served differently from embedded
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	served, err := servedWeight(context.Background(), srv.URL, "/p/", page)
	require.NoError(t, err)
	require.Equal(t, "served", served.how)
	require.Greater(t, served.gzipBytes, w.gzipBytes, "the served bodies are weighed, not the embedded ones")

	_, err = servedWeight(context.Background(), srv.URL, "/missing/", page)
	require.ErrorIs(t, err, errNotServed)
}
