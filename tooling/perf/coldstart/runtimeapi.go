package coldstart

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Runtime API paths, version 2018-06-01.
const (
	pathNext      = "/2018-06-01/runtime/invocation/next"
	pathResponse  = "/2018-06-01/runtime/invocation/{id}/response"
	pathError     = "/2018-06-01/runtime/invocation/{id}/error"
	pathInitError = "/2018-06-01/runtime/init/error"
)

// Invocation metadata the stub hands out with its one event.
const (
	// RequestID is the Lambda-Runtime-Aws-Request-Id of the event.
	RequestID = "8476a536-e9f4-11e8-9739-2dfe598c3fcd"
	traceID   = "Root=1-5bef4de7-ad49b0e87f6ef6c87fc2e700;Parent=9a9197af755a6419;Sampled=1"
	// invocationTimeout sets Lambda-Runtime-Deadline-Ms from the first /next.
	invocationTimeout = 30 * time.Second
	// maxPayload is Lambda's limit on a synchronous response.
	maxPayload = 6 << 20
)

// AnswerKind is how a function answered the Runtime API.
type AnswerKind int

const (
	// NoAnswer: nothing posted yet.
	NoAnswer AnswerKind = iota
	// Response: POST /runtime/invocation/{id}/response.
	Response
	// InvocationError: POST /runtime/invocation/{id}/error.
	InvocationError
	// InitError: POST /runtime/init/error.
	InitError
)

// Answer is the first thing a function posted to the Runtime API.
type Answer struct {
	Kind AnswerKind
	// Body is the posted payload: the response, or the error document.
	Body []byte
}

// RuntimeAPI is a stub of the Lambda Runtime API for one start of one
// function process, listening on 127.0.0.1 on a free port. It records the
// time of the first GET /runtime/invocation/next and answers it with one
// event; later requests for an invocation wait, as they do in Lambda
// between invocations, until the caller goes away or Close. It records the
// first response, invocation error or init error the function posts
// (202 Accepted; a response or error for another request ID gets 400).
type RuntimeAPI struct {
	event       []byte
	functionARN string
	ln          net.Listener
	srv         *http.Server

	nextOnce     sync.Once
	next         chan struct{} // closed at the first /next
	answerOnce   sync.Once
	answered     chan struct{} // closed at the first answer
	closeOnce    sync.Once
	closed       chan struct{}
	mu           sync.Mutex
	firstNext    time.Time
	answer       Answer
	closeErr     error
	serveStopped chan struct{}
}

// NewRuntimeAPI starts a stub that hands out event (empty: {}) as an
// invocation of the function named functionName. Close it when done.
func NewRuntimeAPI(functionName string, event []byte) (*RuntimeAPI, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	if len(event) == 0 {
		event = []byte("{}")
	}
	a := &RuntimeAPI{
		event:        event,
		functionARN:  "arn:aws:lambda:us-east-1:123456789012:function:" + functionName,
		ln:           ln,
		next:         make(chan struct{}),
		answered:     make(chan struct{}),
		closed:       make(chan struct{}),
		serveStopped: make(chan struct{}),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+pathNext, a.handleNext)
	mux.HandleFunc("POST "+pathResponse, a.handleAnswer(Response))
	mux.HandleFunc("POST "+pathError, a.handleAnswer(InvocationError))
	mux.HandleFunc("POST "+pathInitError, a.handleAnswer(InitError))
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(a.serveStopped)
		_ = a.srv.Serve(ln) // ErrServerClosed after Close
	}()
	return a, nil
}

// Addr is the host:port to give the function as AWS_LAMBDA_RUNTIME_API.
func (a *RuntimeAPI) Addr() string { return a.ln.Addr().String() }

// FirstNext is closed when the function first asks for an invocation.
func (a *RuntimeAPI) FirstNext() <-chan struct{} { return a.next }

// FirstNextAt is when the function first asked for an invocation; zero
// before it has.
func (a *RuntimeAPI) FirstNextAt() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.firstNext
}

// Answered is closed when the function first posts a response, an
// invocation error or an init error.
func (a *RuntimeAPI) Answered() <-chan struct{} { return a.answered }

// Answer is the function's first answer; Kind NoAnswer before it has one.
func (a *RuntimeAPI) Answer() Answer {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.answer
}

// Close stops the stub and releases any request still waiting.
func (a *RuntimeAPI) Close() error {
	a.closeOnce.Do(func() {
		close(a.closed)
		err := a.srv.Close()
		<-a.serveStopped
		a.mu.Lock()
		a.closeErr = err
		a.mu.Unlock()
	})
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.closeErr
}

func (a *RuntimeAPI) handleNext(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	first := false
	a.nextOnce.Do(func() {
		first = true
		a.mu.Lock()
		a.firstNext = now
		a.mu.Unlock()
		close(a.next)
	})
	if !first {
		select {
		case <-r.Context().Done():
		case <-a.closed:
		}
		return
	}
	h := w.Header()
	h.Set("Lambda-Runtime-Aws-Request-Id", RequestID)
	h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(now.Add(invocationTimeout).UnixMilli(), 10))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", a.functionARN)
	h.Set("Lambda-Runtime-Trace-Id", traceID)
	h.Set("Content-Type", "application/json")
	_, _ = w.Write(a.event) // a function killed meanwhile is no error of the stub
}

func (a *RuntimeAPI) handleAnswer(kind AnswerKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if kind != InitError && r.PathValue("id") != RequestID {
			http.Error(w, `{"errorMessage":"unknown request ID","errorType":"InvalidRequestID"}`, http.StatusBadRequest)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxPayload+1))
		if err != nil && !errors.Is(err, io.EOF) {
			http.Error(w, `{"errorMessage":"cannot read the body","errorType":"InvalidRequest"}`, http.StatusBadRequest)
			return
		}
		if len(body) > maxPayload {
			http.Error(w, `{"errorMessage":"payload too large","errorType":"RequestEntityTooLarge"}`, http.StatusRequestEntityTooLarge)
			return
		}
		a.answerOnce.Do(func() {
			a.mu.Lock()
			a.answer = Answer{Kind: kind, Body: body}
			a.mu.Unlock()
			close(a.answered)
		})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, `{"status":"OK"}`)
	}
}
