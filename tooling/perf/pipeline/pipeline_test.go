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

// postLater is a Writer whose events reach the receiver after a delay.
type postLater struct {
	url   string
	delay time.Duration
}

func (p postLater) Write(_ context.Context, ids []string) error {
	for _, id := range ids {
		go func() {
			time.Sleep(p.delay)
			if resp, err := http.Post(p.url, "text/plain", strings.NewReader(id)); err == nil {
				resp.Body.Close()
			}
		}()
	}
	return nil
}

func TestPacedMeasuresEachEventFromItsOwnWrite(t *testing.T) {
	t.Parallel()
	rcv, err := NewReceiver()
	require.NoError(t, err)
	defer rcv.Close()
	start := time.Now()
	p, err := Paced(context.Background(), rcv, postLater{rcv.URL + "/floor", 40 * time.Millisecond}, "paced", 5, 100*time.Millisecond, 5*time.Second)
	elapsed := time.Since(start)
	require.NoError(t, err)
	require.Equal(t, 5, p.N)
	// Written 100 ms apart, the last 400 ms after the first: each event's
	// latency is its own (40 ms and the post), not its wait behind the
	// others, which would put the last at 440 ms or more.
	require.GreaterOrEqual(t, elapsed, 440*time.Millisecond)
	require.GreaterOrEqual(t, p.P50, 40*time.Millisecond)
	require.Less(t, p.Max, elapsed-300*time.Millisecond)
	require.LessOrEqual(t, p.P50, p.P95)
	require.LessOrEqual(t, p.P95, p.Max)
}
