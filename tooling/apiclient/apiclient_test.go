package apiclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hookline/hookline/internal/api"
	"github.com/stretchr/testify/require"
)

func TestDo(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k1" {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(401)
			w.Write([]byte(`{"title":"Unauthorized","status":401,"detail":"bad key"}`))
			return
		}
		w.Write([]byte(`{"id":"ep_1"}`))
	}))
	defer srv.Close()
	var out struct{ ID string }
	require.NoError(t, (&Client{BaseURL: srv.URL, Key: "k1"}).Do(context.Background(), "GET", "/x", nil, &out))
	require.Equal(t, "ep_1", out.ID)
	err := (&Client{BaseURL: srv.URL, Key: "nope"}).Do(context.Background(), "POST", "/x", map[string]string{"a": "b"}, nil)
	var p *api.Problem
	require.True(t, errors.As(err, &p))
	require.Equal(t, 401, p.Status)
	require.Equal(t, "bad key", p.Detail)
	require.Equal(t, "http://127.0.0.1:4566/_aws/execute-api/abc", LocalURL("http://127.0.0.1:4566/", "abc"))
}
