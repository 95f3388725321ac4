// Package awsfake serves fakes of AWS services over HTTP, so that an SDK
// client built from an aws.Config whose BaseEndpoint is the server reaches
// them through its own serializers, retryer, error parsing and credential
// providers: what a test sees is what the SDK makes of AWS's wire answers
// (the error codes included, such as SQS's query-compatible codes).
//
// A Server routes each request by the service its SigV4 signature names
// (sqs, sns, events, sts) to that service's handler (sqsfake, snsfake,
// ebfake, stsfake). The helpers here speak the two protocols those services
// use: AWS JSON (SQS, EventBridge) and AWS query with XML answers (SNS,
// STS).
package awsfake

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Region is the region a Server's Config names.
const Region = "us-east-1"

// Error is an AWS error answer.
type Error struct {
	// Status is the HTTP status; zero is 400.
	Status int
	// Code is the error code (the JSON protocol's __type, the query
	// protocol's Error/Code).
	Code string
	// QueryCode, for a JSON service whose clients are query compatible
	// (SQS), is the code sent in x-amzn-query-error: the one the SDK
	// reports. Empty: Code.
	QueryCode string
	// Message is the error's message.
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns an Error with status and code, its message formatted.
func Errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsError is err as an Error: itself, or an error whose text starts with
// "Code: " (as the fakes' rule errors do) as a 400 with that code, or any
// other as a 500 InternalError.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		if e.Status == 0 {
			e.Status = http.StatusBadRequest
		}
		return e
	}
	if code, msg, ok := strings.Cut(err.Error(), ": "); ok && !strings.ContainsAny(code, " ") {
		return &Error{Status: http.StatusBadRequest, Code: code, Message: msg}
	}
	return &Error{Status: http.StatusInternalServerError, Code: "InternalError", Message: err.Error()}
}

// Server is an HTTP server in front of fakes of AWS services.
type Server struct {
	// URL is the server's base URL, the endpoint a client is pointed at.
	URL    string
	routes map[string]http.Handler
	mu     sync.Mutex
	seen   []SigV4Scope
}

// Requests returns the scope of every request the Server received, in
// order: a test counts calls (the SDK's retries among them) and checks the
// region and credentials each was signed for.
func (s *Server) Requests() []SigV4Scope {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SigV4Scope(nil), s.seen...)
}

// Serve starts a Server routing each SigV4 signing name ("sqs", "sns",
// "events", "sts") to its handler; the test's cleanup stops it.
func Serve(t testing.TB, routes map[string]http.Handler) *Server {
	s := &Server{routes: routes}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// ServeHTTP routes r by its signature's service; an unsigned request or a
// service with no fake is refused.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, Scope(r))
	s.mu.Unlock()
	h, ok := s.routes[Scope(r).Service]
	if !ok {
		WriteQueryError(w, Errorf(http.StatusForbidden, "MissingAuthenticationToken", "no fake for service %q", Scope(r).Service))
		return
	}
	h.ServeHTTP(w, r)
}

// Config is an aws.Config for clients of the Server, signing with static
// credentials whose access key id is accessKey.
func (s *Server) Config(accessKey string) aws.Config {
	return aws.Config{
		Region:       Region,
		BaseEndpoint: aws.String(s.URL),
		Credentials:  StaticCredentials(accessKey),
	}
}

// StaticCredentials are credentials whose access key id is accessKey.
func StaticCredentials(accessKey string) aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider(accessKey, "secret", "")
}

// SigV4Scope is what a request's SigV4 Authorization header names.
type SigV4Scope struct{ AccessKey, Region, Service string }

// Scope reads the access key id, region and service from r's SigV4
// Authorization header ("Credential=AKID/DATE/REGION/SERVICE/aws4_request").
func Scope(r *http.Request) SigV4Scope {
	auth := r.Header.Get("Authorization")
	_, cred, ok := strings.Cut(auth, "Credential=")
	if !ok {
		return SigV4Scope{}
	}
	cred, _, _ = strings.Cut(cred, ",")
	p := strings.Split(cred, "/")
	if len(p) < 5 {
		return SigV4Scope{}
	}
	return SigV4Scope{AccessKey: p[0], Region: p[2], Service: p[3]}
}

// ReadJSON decodes an AWS JSON request's body into v.
func ReadJSON(r *http.Request, v any) error {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		return Errorf(http.StatusBadRequest, "SerializationException", "%v", err)
	}
	return nil
}

// Target is an AWS JSON request's operation: the part of X-Amz-Target
// after the dot ("AmazonSQS.SendMessage" is "SendMessage").
func Target(r *http.Request) string {
	t := r.Header.Get("X-Amz-Target")
	return t[strings.LastIndexByte(t, '.')+1:]
}

// WriteJSON answers v as an AWS JSON response.
func WriteJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	_ = json.NewEncoder(w).Encode(v)
}

// WriteJSONError answers err as an AWS JSON error (AsError), with the
// x-amzn-query-error header a query-compatible service sends.
func WriteJSONError(w http.ResponseWriter, err error) {
	e := AsError(err)
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	if e.QueryCode != "" {
		fault := "Sender"
		if e.Status >= 500 {
			fault = "Receiver"
		}
		w.Header().Set("X-Amzn-Query-Error", e.QueryCode+";"+fault)
	}
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": e.Code, "message": e.Message})
}

// WriteXML answers v, an operation's XML response document, for an AWS
// query request.
func WriteXML(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "text/xml")
	_ = xml.NewEncoder(w).Encode(v)
}

type queryError struct {
	XMLName xml.Name `xml:"ErrorResponse"`
	Error   struct {
		Type    string `xml:"Type"`
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	} `xml:"Error"`
	RequestID string `xml:"RequestId"`
}

// WriteQueryError answers err as an AWS query error document (AsError).
func WriteQueryError(w http.ResponseWriter, err error) {
	e := AsError(err)
	var doc queryError
	doc.Error.Type, doc.Error.Code, doc.Error.Message, doc.RequestID = "Sender", e.Code, e.Message, "fake-request"
	if e.Status >= 500 {
		doc.Error.Type = "Receiver"
	}
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(e.Status)
	_ = xml.NewEncoder(w).Encode(doc)
}
