package coldstart

import (
	"context"
	"debug/buildinfo"
	"debug/elf"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/fnenv"
	"github.com/stretchr/testify/require"
)

const repoRoot = "../../.."

func TestRuntimeAPIHandsOutOneEvent(t *testing.T) {
	t.Parallel()
	api, err := NewRuntimeAPI("fn", []byte(`{"k":1}`))
	require.NoError(t, err)
	defer api.Close()
	base := "http://" + api.Addr() + "/2018-06-01/runtime"
	require.True(t, api.FirstNextAt().IsZero())

	before := time.Now()
	resp, err := http.Get(base + "/invocation/next")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	after := time.Now()

	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.JSONEq(t, `{"k":1}`, string(body))
	require.Equal(t, RequestID, resp.Header.Get("Lambda-Runtime-Aws-Request-Id"))
	require.Equal(t, "arn:aws:lambda:us-east-1:123456789012:function:fn", resp.Header.Get("Lambda-Runtime-Invoked-Function-Arn"))
	require.NotEmpty(t, resp.Header.Get("Lambda-Runtime-Trace-Id"))
	deadline, err := strconv.ParseInt(resp.Header.Get("Lambda-Runtime-Deadline-Ms"), 10, 64)
	require.NoError(t, err)
	require.Greater(t, deadline, after.UnixMilli())

	select {
	case <-api.FirstNext():
	default:
		t.Fatal("FirstNext not closed after the first /next")
	}
	at := api.FirstNextAt()
	require.False(t, at.Before(before), "first /next recorded before the request")
	require.False(t, at.After(after), "first /next recorded after the response")

	// A second /next waits for an invocation that never comes.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/invocation/next", nil)
	require.NoError(t, err)
	_, err = http.DefaultClient.Do(req)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, at, api.FirstNextAt(), "a later /next moved the first one")
}

func TestRuntimeAPIRecordsTheAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, path string
		status     int
		want       AnswerKind
	}{
		{"response", "/invocation/" + RequestID + "/response", http.StatusAccepted, Response},
		{"invocation error", "/invocation/" + RequestID + "/error", http.StatusAccepted, InvocationError},
		{"init error", "/init/error", http.StatusAccepted, InitError},
		{"response to another request", "/invocation/other/response", http.StatusBadRequest, NoAnswer},
		{"error of another request", "/invocation/other/error", http.StatusBadRequest, NoAnswer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api, err := NewRuntimeAPI("fn", nil)
			require.NoError(t, err)
			defer api.Close()
			resp, err := http.Post("http://"+api.Addr()+"/2018-06-01/runtime"+tc.path, "application/json", strings.NewReader(`"x"`))
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode)
			require.Equal(t, tc.want, api.Answer().Kind)
			if tc.want != NoAnswer {
				require.Equal(t, `"x"`, string(api.Answer().Body))
				<-api.Answered()
			}
		})
	}
}

// TestHelloAnswersThroughTheStub runs the hello world against the stub to
// its answer: the stub speaks the protocol aws-lambda-go expects.
func TestHelloAnswersThroughTheStub(t *testing.T) {
	t.Parallel()
	bin := buildHello(t)
	api, err := NewRuntimeAPI("hello", nil)
	require.NoError(t, err)
	defer api.Close()
	cmd := exec.Command(bin)
	cmd.Env = lambdaEnv(api.Addr(), "hello")
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	select {
	case <-api.Answered():
	case <-time.After(StartTimeout):
		t.Fatal("no answer from hello")
	}
	require.Equal(t, Answer{Kind: Response, Body: []byte(`"hello"`)}, api.Answer())
}

func TestMeasureHello(t *testing.T) {
	t.Parallel()
	bin := buildHello(t)
	r, err := Measure(context.Background(), bin, nil, 3)
	require.NoError(t, err)
	fi, err := os.Stat(bin)
	require.NoError(t, err)
	require.Equal(t, fi.Size(), r.Size)
	require.Len(t, r.Starts, 3)
	require.Positive(t, r.Min)
	require.GreaterOrEqual(t, r.Median, r.Min)
	require.Less(t, r.Median, StartTimeout)
}

func TestMeasureInterleavedKeepsTheOrder(t *testing.T) {
	t.Parallel()
	bin := buildHello(t)
	r, err := MeasureInterleaved(context.Background(), []Target{{Name: "a", Bin: bin}, {Name: "b", Bin: bin}, {Name: "c", Bin: bin}}, 2)
	require.NoError(t, err)
	require.Len(t, r, 3)
	for _, x := range r {
		require.Len(t, x.Starts, 2)
	}
}

// TestMeasureFunctionThatCannotStart: enqueue without its configuration
// exits at start; Measure says so, with the function's own words.
func TestMeasureFunctionThatCannotStart(t *testing.T) {
	t.Parallel()
	bin, _, err := Build(context.Background(), t.TempDir(), filepath.Join(repoRoot, "functions", "enqueue"))
	require.NoError(t, err)
	began := time.Now()
	_, err = Measure(context.Background(), bin, nil, 1)
	require.Error(t, err)
	require.Contains(t, err.Error(), "exited before asking for an invocation")
	require.Contains(t, err.Error(), "HOOKLINE_STATE_TABLE is required")
	require.Less(t, time.Since(began), StartTimeout)
}

// TestMeasureGivesUp: a process that neither asks nor exits is killed at
// the deadline.
func TestMeasureGivesUp(t *testing.T) {
	t.Parallel()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	bin := filepath.Join(t.TempDir(), "bootstrap")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\nexec "+sleep+" 60\n"), 0o755))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err = Measure(ctx, bin, nil, 1)
	require.ErrorContains(t, err, "did not ask for an invocation")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(began), 5*time.Second)
}

// TestBuildMirrorsTheMakefile checks the flags of a built binary, and that
// the Makefile still builds with them.
func TestBuildMirrorsTheMakefile(t *testing.T) {
	t.Parallel()
	bin := buildHello(t)
	info, err := buildinfo.ReadFile(bin)
	require.NoError(t, err)
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	require.Equal(t, "0", settings["CGO_ENABLED"])
	require.Equal(t, "linux", settings["GOOS"])
	require.Equal(t, runtime.GOARCH, settings["GOARCH"])
	require.Equal(t, "lambda.norpc", settings["-tags"])
	require.Equal(t, "true", settings["-trimpath"])
	// -trimpath keeps -ldflags out of the build info: -s and -w show as
	// the missing symbol table and DWARF.
	f, err := elf.Open(bin)
	require.NoError(t, err)
	defer f.Close()
	for _, s := range f.Sections {
		require.NotEqual(t, ".symtab", s.Name, "symbol table kept: no -s")
		require.False(t, strings.HasPrefix(s.Name, ".debug_"), "DWARF kept: no -w")
	}

	mk, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	require.NoError(t, err)
	ldflags := regexp.MustCompile(`(?m)^LDFLAGS\s*:=\s*(.*)\$\(VERSION\)$`).FindSubmatch(mk)
	require.NotNil(t, ldflags, "no LDFLAGS in the Makefile")
	require.Equal(t, strings.TrimSuffix(buildArgs[len(buildArgs)-1], Version), string(ldflags[1]))
	require.Regexp(t, `CGO_ENABLED=0 GOOS=linux GOARCH=[^\n]*\$\(GO\) build -tags lambda\.norpc -trimpath\s*\\\s*-ldflags="\$\(LDFLAGS\)"`, string(mk))
}

func buildHello(t *testing.T) string {
	t.Helper()
	bin, _, err := Build(context.Background(), t.TempDir(), "hello")
	require.NoError(t, err)
	return bin
}

// Each function's environment in the suite passes its fnenv loader, so a
// variable a function newly requires fails here, not in the middle of
// make bench.
func TestSuiteEnvironmentsLoad(t *testing.T) {
	t.Parallel()
	loaders := map[string]func(func(string) string) error{
		"enqueue": func(g func(string) string) error { _, err := fnenv.LoadEnqueue(g); return err },
		"deliver": func(g func(string) string) error { _, err := fnenv.LoadDeliver(g); return err },
		"api":     func(g func(string) string) error { _, err := fnenv.LoadAPI(g); return err },
		"replay":  func(g func(string) string) error { _, err := fnenv.LoadReplay(g); return err },
	}
	require.Len(t, functions, len(loaders))
	for _, f := range functions {
		env := map[string]string{}
		for _, kv := range f.Env {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		load, ok := loaders[f.Name]
		require.True(t, ok, f.Name)
		require.NoError(t, load(func(k string) string { return env[k] }), f.Name)
	}
}
