// Package ebfake is EventBridge's PutEvents for tests, over HTTP in its AWS
// JSON protocol (package awsfake), held to the AWS rules the local cloud
// forgives: 1 to 10 entries a call; each entry and the entries together at
// most 262,144 bytes counted as AWS counts them (Source, DetailType, Detail
// and each Resource in UTF-8 bytes, 14 for a Time); Source, DetailType and
// Detail required (a missing one fails the entry, InvalidArgument); Detail
// a JSON object (MalformedDetail); a Source starting "aws." refused
// (NotAuthorizedForSourceException).
//
// As AWS does (aws/aws-cli#9186), an entry for a bus that does not exist is
// accepted and dropped: PutEvents succeeds, nothing is delivered. Dropped
// counts those, so that a test sees what AWS would hide.
//
// Config.Authorize stands for IAM (AccessDeniedException); Config.Fail
// scripts an answer to the whole call, Config.FailEntry one entry's.
package ebfake

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/hookline/hookline/internal/fakes/awsfake"
)

// EventBridge's PutEvents limits.
const (
	MaxEntries    = 10
	MaxEntryBytes = 256 << 10
	timeBytes     = 14
)

// Entry is a PutEvents request entry, as sent.
type Entry struct {
	Source, DetailType, Detail, EventBusName string
	Resources                                []string
	// Time is the entry's time in epoch seconds, nil when not sent.
	Time *float64
}

// Size is what the entry counts against MaxEntryBytes.
func (e Entry) Size() int {
	n := len(e.Source) + len(e.DetailType) + len(e.Detail)
	for _, r := range e.Resources {
		n += len(r)
	}
	if e.Time != nil {
		n += timeBytes
	}
	return n
}

// Event is an entry a bus accepted, with the access key that signed it.
type Event struct {
	ID string
	Entry
	AccessKey string
}

// Config sets up a Fake.
type Config struct {
	// Authorize, if set, is asked about each call: the access key that
	// signed it and each entry's bus ARN. False fails the call with
	// AccessDeniedException.
	Authorize func(accessKey, busARN string) bool
	// Fail, if set, is asked before the rules; an error it returns is the
	// answer to the whole call (an awsfake.Error for a status and code).
	Fail func() error
	// FailEntry, if set, is asked about each entry that passes the rules;
	// a non-empty code fails that entry alone with the code and message.
	FailEntry func(e Entry) (code, message string)
}

// Fake holds event buses, named by ARN. Safe for concurrent use.
type Fake struct {
	cfg     Config
	mu      sync.Mutex
	buses   map[string][]Event
	dropped int
	seq     int
}

// New returns an EventBridge with no bus.
func New(cfg Config) *Fake { return &Fake{cfg: cfg, buses: map[string][]Event{}} }

// AddBus creates the bus arn (arn:aws:events:REGION:ACCOUNT:event-bus/NAME).
func (f *Fake) AddBus(arn string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.buses[arn]; !ok {
		f.buses[arn] = nil
	}
}

// Events returns what bus arn accepted, in order.
func (f *Fake) Events(arn string) []Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Event(nil), f.buses[arn]...)
}

// Dropped is how many accepted entries named a bus that does not exist.
func (f *Fake) Dropped() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dropped
}

type resultEntry struct {
	EventID      string `json:"EventId,omitempty"`
	ErrorCode    string `json:"ErrorCode,omitempty"`
	ErrorMessage string `json:"ErrorMessage,omitempty"`
}

// ServeHTTP answers PutEvents, the one operation the fake has.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if op := awsfake.Target(r); op != "PutEvents" {
		awsfake.WriteJSONError(w, awsfake.Errorf(400, "UnknownOperationException", "the fake answers PutEvents only, not %s", op))
		return
	}
	var in struct{ Entries []Entry }
	if err := awsfake.ReadJSON(r, &in); err != nil {
		awsfake.WriteJSONError(w, err)
		return
	}
	out, err := f.put(awsfake.Scope(r), in.Entries)
	if err != nil {
		awsfake.WriteJSONError(w, err)
		return
	}
	failed := 0
	for _, e := range out {
		if e.ErrorCode != "" {
			failed++
		}
	}
	awsfake.WriteJSON(w, map[string]any{"FailedEntryCount": failed, "Entries": out})
}

// put applies the call's rules, then each entry's.
func (f *Fake) put(scope awsfake.SigV4Scope, entries []Entry) ([]resultEntry, error) {
	if f.cfg.Fail != nil {
		if err := f.cfg.Fail(); err != nil {
			return nil, err
		}
	}
	if n := len(entries); n < 1 || n > MaxEntries {
		return nil, awsfake.Errorf(400, "ValidationException", "1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length between 1 and %d (got %d)", MaxEntries, n)
	}
	total := 0
	for _, e := range entries {
		total += e.Size()
	}
	if total > MaxEntryBytes {
		return nil, awsfake.Errorf(400, "ValidationException", "Total size of the entries in the request is over the limit: %d bytes, at most %d", total, MaxEntryBytes)
	}
	for _, e := range entries {
		if f.cfg.Authorize != nil && !f.cfg.Authorize(scope.AccessKey, f.busARN(scope, e.EventBusName)) {
			return nil, awsfake.Errorf(400, "AccessDeniedException", "User: %s is not authorized to perform: events:PutEvents on resource: %s", scope.AccessKey, e.EventBusName)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]resultEntry, len(entries))
	for i, e := range entries {
		out[i] = f.putLocked(scope, e)
	}
	return out, nil
}

func (f *Fake) putLocked(scope awsfake.SigV4Scope, e Entry) resultEntry {
	var detail map[string]any
	switch {
	case e.Source == "" || e.DetailType == "" || e.Detail == "":
		return resultEntry{ErrorCode: "InvalidArgument", ErrorMessage: "Parameter(s) Source, DetailType or Detail is(are) not specified"}
	case strings.HasPrefix(e.Source, "aws."):
		return resultEntry{ErrorCode: "NotAuthorizedForSourceException", ErrorMessage: "Not authorized for the source " + e.Source}
	case json.Unmarshal([]byte(e.Detail), &detail) != nil || detail == nil:
		return resultEntry{ErrorCode: "MalformedDetail", ErrorMessage: "Detail is malformed."}
	}
	if f.cfg.FailEntry != nil {
		if code, msg := f.cfg.FailEntry(e); code != "" {
			return resultEntry{ErrorCode: code, ErrorMessage: msg}
		}
	}
	f.seq++
	id := "ev-" + strconv.Itoa(f.seq)
	bus := f.busARN(scope, e.EventBusName)
	if _, ok := f.buses[bus]; !ok {
		f.dropped++
		return resultEntry{EventID: id}
	}
	f.buses[bus] = append(f.buses[bus], Event{ID: id, Entry: e, AccessKey: scope.AccessKey})
	return resultEntry{EventID: id}
}

// busARN is the bus an entry names: its EventBusName when an ARN, else the
// bus of that name ("default" when empty) in the signature's region and
// the local cloud's account, 000000000000 (the fake knows no caller's).
func (f *Fake) busARN(scope awsfake.SigV4Scope, name string) string {
	if strings.HasPrefix(name, "arn:") {
		return name
	}
	if name == "" {
		name = "default"
	}
	return "arn:aws:events:" + scope.Region + ":000000000000:event-bus/" + name
}
