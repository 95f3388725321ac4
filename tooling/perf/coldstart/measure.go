package coldstart

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// StartTimeout bounds one start: a process that has neither asked for an
// invocation nor exited by then is killed and the measurement fails. A
// shorter deadline on the context passed to Measure wins.
const StartTimeout = 10 * time.Second

// Target is a binary to measure.
type Target struct {
	// Name is the function's name (AWS_LAMBDA_FUNCTION_NAME). Empty: the
	// binary's file name.
	Name string
	// Bin is the path of the binary.
	Bin string
	// Env is added to the Lambda environment of every start: the
	// function's own configuration. Nil: none.
	Env []string
}

// Result is what Measure found for one binary.
type Result struct {
	// Size of the binary in bytes.
	Size int64
	// Median and Min of Starts.
	Median, Min time.Duration
	// Starts are the start times, in the order measured: from just before
	// the process was started to its first request for an invocation.
	Starts []time.Duration
}

// Measure starts bin runs times, one after the other, with the Lambda
// environment plus env, and returns its start times. See
// MeasureInterleaved to compare binaries.
func Measure(ctx context.Context, bin string, env []string, runs int) (Result, error) {
	rs, err := MeasureInterleaved(ctx, []Target{{Bin: bin, Env: env}}, runs)
	if err != nil {
		return Result{}, err
	}
	return rs[0], nil
}

// MeasureInterleaved measures targets round-robin: runs rounds of one start
// of each, the first of a round rotating, so that the machine's noise hits
// every target alike. It returns one Result per target, in their order,
// and stops at the first start that fails.
func MeasureInterleaved(ctx context.Context, targets []Target, runs int) ([]Result, error) {
	if runs < 1 {
		return nil, fmt.Errorf("runs must be at least 1, not %d", runs)
	}
	results := make([]Result, len(targets))
	for i, t := range targets {
		fi, err := os.Stat(t.Bin)
		if err != nil {
			return nil, err
		}
		results[i].Size = fi.Size()
		results[i].Starts = make([]time.Duration, 0, runs)
	}
	for round := range runs {
		for k := range targets {
			i := (round + k) % len(targets)
			d, err := start(ctx, targets[i])
			if err != nil {
				return nil, fmt.Errorf("start %d of %s: %w", round+1, targets[i].Bin, err)
			}
			results[i].Starts = append(results[i].Starts, d)
		}
	}
	for i := range results {
		results[i].Median, results[i].Min = median(results[i].Starts), slices.Min(results[i].Starts)
	}
	return results, nil
}

// median of ds; the mean of the middle two for an even count.
func median(ds []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// lambdaEnv is the environment Lambda gives a function, as far as a start
// reads it, with fake credentials: no variable of this process leaks in
// (no HOME, so no ~/.aws, no AWS_ENDPOINT_URL, no AWS_PROFILE).
func lambdaEnv(runtimeAPI, name string) []string {
	return []string{
		"AWS_LAMBDA_RUNTIME_API=" + runtimeAPI,
		"_HANDLER=bootstrap",
		"AWS_LAMBDA_FUNCTION_NAME=" + name,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=128",
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=test",
		"AWS_SECRET_ACCESS_KEY=test",
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// start starts t once and returns the time to its first request for an
// invocation. The process is killed then, or at the timeout.
func start(ctx context.Context, t Target) (time.Duration, error) {
	name := t.Name
	if name == "" {
		name = filepath.Base(t.Bin)
	}
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	api, err := NewRuntimeAPI(name, nil)
	if err != nil {
		return 0, err
	}
	defer api.Close()

	out := &tail{max: 2048}
	cmd := exec.Command(t.Bin)
	cmd.Env = append(lambdaEnv(api.Addr(), name), t.Env...)
	cmd.Dir = filepath.Dir(t.Bin) // Lambda runs bootstrap in its own directory, /var/task
	cmd.Stdout, cmd.Stderr = out, out
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill() // fails only if it has exited already
		<-exited
	}

	select {
	case <-api.FirstNext():
		stop()
		return api.FirstNextAt().Sub(began), nil
	case <-api.Answered():
		stop()
		select {
		case <-api.FirstNext(): // it asked and answered before this select ran: the start counts
			return api.FirstNextAt().Sub(began), nil
		default:
		}
		return 0, fmt.Errorf("init error before asking for an invocation: %s; output: %s", api.Answer().Body, out)
	case err := <-exited:
		select {
		case <-api.FirstNext(): // it asked, then exited: the start counts
			return api.FirstNextAt().Sub(began), nil
		default:
		}
		return 0, fmt.Errorf("exited before asking for an invocation (%v); output: %s", err, out)
	case <-ctx.Done():
		stop()
		return 0, fmt.Errorf("did not ask for an invocation within %s (%w); output: %s", time.Since(began).Round(time.Millisecond), ctx.Err(), out)
	}
}

// tail keeps the last max bytes written to it. os/exec calls Write from one
// goroutine at a time when Stdout and Stderr are the same *tail.
type tail struct {
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = t.b[over:]
	}
	return len(p), nil
}

// String is the output, trimmed; "(none)" if there was none.
func (t *tail) String() string {
	s := strings.TrimSpace(string(t.b))
	if s == "" {
		return "(none)"
	}
	return s
}
