package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// killer sends SIGKILL, every interval until it is stopped, to the local
// cloud's processes of the named functions: the bootstraps ministack runs
// as host processes, told apart by the AWS_LAMBDA_FUNCTION_NAME in their
// environment and, when this project started the local cloud, by descent
// from its process.
type killer struct {
	functions map[string]string // function name -> label ("deliver", "enqueue")
	root      int               // ministack's pid; 0: any process
	interval  time.Duration

	mu    sync.Mutex
	kills []kill
}

// kill is one process killed.
type kill struct {
	at       time.Time
	function string
	pid      int
}

// newKiller reads ministack's pid from .local/ministack.pid when there is one.
func newKiller(functions map[string]string, interval time.Duration) *killer {
	k := &killer{functions: functions, interval: interval}
	if b, err := os.ReadFile(".local/ministack.pid"); err == nil {
		k.root, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	return k
}

// run kills every interval until ctx ends.
func (k *killer) run(ctx context.Context) {
	t := time.NewTicker(k.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			k.round()
		}
	}
}

// round kills every matching process once.
func (k *killer) round() {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		fn, ok := k.functionOf(pid)
		if !ok {
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
			k.mu.Lock()
			k.kills = append(k.kills, kill{at: time.Now(), function: fn, pid: pid})
			k.mu.Unlock()
		}
	}
}

// functionOf returns the label of the function pid runs, if it is one of
// ours under the local cloud.
func (k *killer) functionOf(pid int) (string, bool) {
	env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return "", false
	}
	label := ""
	for _, kv := range bytes.Split(env, []byte{0}) {
		if name, ok := bytes.CutPrefix(kv, []byte("AWS_LAMBDA_FUNCTION_NAME=")); ok {
			label = k.functions[string(name)]
			break
		}
	}
	if label == "" || (k.root != 0 && !descends(pid, k.root)) {
		return "", false
	}
	return label, true
}

// descends reports whether pid is a descendant of root.
func descends(pid, root int) bool {
	for i := 0; i < 64 && pid > 1; i++ {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			return false
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
		rest := stat[bytes.LastIndexByte(stat, ')')+1:]
		f := strings.Fields(string(rest))
		if len(f) < 2 {
			return false
		}
		if pid, err = strconv.Atoi(f[1]); err != nil {
			return false
		}
		if pid == root {
			return true
		}
	}
	return false
}

// counts returns how many processes of each function were killed.
func (k *killer) counts() map[string]int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := map[string]int{}
	for _, x := range k.kills {
		n[x.function]++
	}
	return n
}

// lastDeliverKillBefore returns the latest kill of a deliver process before t.
func (k *killer) lastDeliverKillBefore(t time.Time) (time.Time, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var last time.Time
	for _, x := range k.kills {
		if x.function == "deliver" && x.at.Before(t) && x.at.After(last) {
			last = x.at
		}
	}
	return last, !last.IsZero()
}

// victim is a delivery whose message a killed deliver process held: the
// receiver saw its attempts skip a number (the process died before its POST)
// or saw an attempt after one it answered 2xx (the process died after the
// POST, before it recorded the outcome).
type victim struct {
	webhookID string
	attempt   int           // the attempt that came after the crash
	wait      time.Duration // from the kill to that attempt
}

// crashVictims finds the victims in the receipts taken before replay began,
// and how long each waited to be tried again after the kill before it.
func crashVictims(receipts []receipt, k *killer, before time.Time) []victim {
	byID := map[string][]receipt{}
	for _, r := range receipts {
		if r.at.Before(before) && r.attempt > 0 {
			byID[r.webhookID] = append(byID[r.webhookID], r)
		}
	}
	var out []victim
	for id, rs := range byID {
		slices.SortFunc(rs, func(a, b receipt) int { return a.at.Compare(b.at) })
		prev := receipt{attempt: 0}
		for _, r := range rs {
			skipped := r.attempt > prev.attempt+1
			afterSuccess := prev.attempt > 0 && prev.ok && r.attempt > prev.attempt
			if skipped || afterSuccess {
				if at, ok := k.lastDeliverKillBefore(r.at); ok && (prev.attempt == 0 || at.After(prev.at)) {
					out = append(out, victim{webhookID: id, attempt: r.attempt, wait: r.at.Sub(at)})
				}
			}
			prev = r
		}
	}
	slices.SortFunc(out, func(a, b victim) int { return int(a.wait - b.wait) })
	return out
}

// report prints the kills and each crash victim's wait; it returns the
// longest wait.
func reportKills(k *killer, victims []victim) time.Duration {
	n := k.counts()
	fmt.Printf("kill: SIGKILLed %d deliver and %d enqueue processes; %d crash victims retried\n", n["deliver"], n["enqueue"], len(victims))
	longest := time.Duration(0)
	for i, v := range victims {
		longest = max(longest, v.wait)
		if i < 40 {
			fmt.Printf("  victim %s: attempt %d came %s after the kill\n", v.webhookID, v.attempt, v.wait.Round(100*time.Millisecond))
		}
	}
	if len(victims) > 40 {
		fmt.Printf("  ... %d more\n", len(victims)-40)
	}
	if len(victims) > 0 {
		fmt.Printf("kill: time to retry a crash victim: median %s, longest %s\n",
			victims[len(victims)/2].wait.Round(100*time.Millisecond), longest.Round(100*time.Millisecond))
	}
	return longest
}
