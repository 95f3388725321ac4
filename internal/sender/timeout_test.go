package sender_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/sender"
	"github.com/stretchr/testify/require"
)

// An endpoint's own timeout (Request.Timeout) replaces the client's, both
// shorter and longer, and the caller's deadline still bounds it.
func TestSendRequestTimeout(t *testing.T) {
	t.Parallel()
	_, signer := newSecret(t)
	client := newClient(t) // requestTimeout

	t.Run("shorter than the client's", func(t *testing.T) {
		srv := newHangServer(t, nil)
		req := newRequest(srv.URL, signer)
		req.Timeout = requestTimeout / 4
		res := client.Send(context.Background(), req)
		require.Equal(t, sender.Retry, res.Outcome)
		require.Equal(t, "timeout", res.Error)
		// The deadline starts before the request is built and Latency when
		// it is sent, so Latency may fall a little short of the timeout
		// (124.7 ms of 125 in one clean-clone run): it is held to half of
		// it, an attempt that waited, not one that failed at once.
		require.GreaterOrEqual(t, res.Latency, requestTimeout/8)
		require.Less(t, res.Latency, requestTimeout, "the endpoint's timeout, not the client's")
	})

	t.Run("longer than the client's", func(t *testing.T) {
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(requestTimeout * 3 / 2)
			io.WriteString(w, "ok")
		})
		req := newRequest(srv.URL, signer)
		req.Timeout = 4 * requestTimeout
		res := client.Send(context.Background(), req)
		require.Equal(t, sender.Delivered, res.Outcome, "error %q", res.Error)
	})

	t.Run("the caller's deadline first", func(t *testing.T) {
		srv := newHangServer(t, nil)
		req := newRequest(srv.URL, signer)
		req.Timeout = 4 * requestTimeout
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout/4)
		defer cancel()
		res := client.Send(ctx, req)
		require.Equal(t, "timeout", res.Error)
		require.Less(t, res.Latency, requestTimeout)
	})
}
