package pipeline

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestReceiverDelay(t *testing.T) {
	rcv, err := NewReceiver()
	require.NoError(t, err)
	defer rcv.Close()
	post := func(id string) time.Duration {
		start := time.Now()
		resp, err := http.Post(rcv.URL+"/floor", "text/plain", strings.NewReader(id))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusNoContent, resp.StatusCode)
		return time.Since(start)
	}
	post("at-once")
	rcv.SetDelay(80 * time.Millisecond)
	start := time.Now()
	require.GreaterOrEqual(t, post("delayed"), 80*time.Millisecond)
	// The arrival is recorded before the wait.
	got, err := rcv.WaitAll(context.Background(), []string{"at-once", "delayed"}, time.Second)
	require.NoError(t, err)
	require.Less(t, got["delayed"].Sub(start), 80*time.Millisecond)
	require.Equal(t, 1, rcv.TakePeak())

	// Three at once are three in flight.
	done := make(chan time.Duration)
	for _, id := range []string{"a", "b", "c"} {
		go func() { done <- post(id) }()
	}
	for range 3 {
		<-done
	}
	require.Equal(t, 3, rcv.TakePeak())
	require.Equal(t, 0, rcv.TakePeak())
}
