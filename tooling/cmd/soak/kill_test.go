package main

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCrashVictims(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	k := &killer{kills: []kill{{at: at(10), function: "deliver"}, {at: at(12), function: "enqueue"}, {at: at(100), function: "deliver"}}}
	receipts := []receipt{
		// Tried, failed, tried again: no crash.
		{webhookID: "a", attempt: 1, at: at(1)}, {webhookID: "a", attempt: 2, at: at(3), ok: true},
		// Attempt 1 never arrived: the process died before its POST.
		{webhookID: "b", attempt: 2, at: at(58)},
		// Answered 2xx, then tried again: the process died before recording.
		{webhookID: "c", attempt: 1, at: at(9), ok: true}, {webhookID: "c", attempt: 2, at: at(70), ok: true},
		// A gap with no deliver kill before it is not a crash victim.
		{webhookID: "d", attempt: 3, at: at(5)},
		// After the replay began: not counted.
		{webhookID: "e", attempt: 3, at: at(150)},
	}
	got := crashVictims(receipts, k, at(120))
	require.Equal(t, []victim{
		{webhookID: "b", attempt: 2, wait: 48 * time.Second},
		{webhookID: "c", attempt: 2, wait: 60 * time.Second},
	}, got)
	require.Equal(t, 60*time.Second, reportKills(k, got))
	require.Equal(t, map[string]int{"deliver": 2, "enqueue": 1}, k.counts())
}

func TestDescends(t *testing.T) {
	t.Parallel()
	require.True(t, descends(os.Getpid(), os.Getppid()))
	require.False(t, descends(os.Getppid(), os.Getpid()))
	require.False(t, descends(os.Getpid(), 1<<22+7), "no such ancestor")
}

// A request to the receiver's port but not its path (an earlier test's
// endpoint whose receiver had this port) is answered 404 and counted as a
// stray, never as a receipt; one to its own path is a receipt.
func TestStrayRequestsAreNotReceipts(t *testing.T) {
	t.Parallel()
	c := newChaotic(false)
	defer c.srv.Close()
	c.healthy.Store(true)
	for _, path := range []string{"/hook", "/", c.path + "x"} {
		resp, err := http.Post(c.srv.URL+path, "application/json", strings.NewReader(`{}`))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusNotFound, resp.StatusCode, path)
	}
	resp, err := http.Post(c.srv.URL+c.path, "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.EqualValues(t, 3, c.strays.Load())
	require.Len(t, c.receipts, 1)
}
