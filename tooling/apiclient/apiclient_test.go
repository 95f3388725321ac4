package apiclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/hookline/hookline/internal/api"
	"github.com/stretchr/testify/require"
)

// A refusal of the tenant's limit of expensive requests is sent again after
// a second; any other 429 is the caller's at once.
func TestDoWaitsOutTheTenantLimit(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/other":
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"status":429,"detail":"replay jobs"}`))
		case n.Add(1) <= 2:
			w.Header().Set("X-Hookline-Limit", "tenant-expensive")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"status":429,"detail":"over its limit"}`))
		default:
			_, _ = w.Write([]byte(`{"data":[]}`))
		}
	}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, Key: "k"}
	var out struct {
		Data []any `json:"data"`
	}
	require.NoError(t, c.Do(context.Background(), "GET", "/v1/endpoints", nil, &out))
	require.Equal(t, int32(3), n.Load(), "two refusals waited out, then served")

	err := c.Do(context.Background(), "GET", "/other", nil, nil)
	var p *api.Problem
	require.True(t, errors.As(err, &p))
	require.Equal(t, http.StatusTooManyRequests, p.Status, "another limit's 429 is returned at once")
}
