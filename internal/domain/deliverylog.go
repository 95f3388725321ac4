package domain

import "time"

// StatusClass is a class of a delivery's last answer, as the delivery log's
// filter names it (GET /v1/deliveries?status_class=): an HTTP status
// class, or why no answer came.
type StatusClass string

// The status classes. A 429 is in 4xx; a timeout, a network failure and an
// address the SSRF guard refused are answers with no HTTP status (0).
const (
	Status2xx     StatusClass = "2xx"
	Status3xx     StatusClass = "3xx"
	Status4xx     StatusClass = "4xx"
	Status5xx     StatusClass = "5xx"
	StatusTimeout StatusClass = "timeout"
	StatusNetwork StatusClass = "network"
	StatusRefused StatusClass = "refused"
)

// StatusClasses lists every status class, in the order the API documents
// them.
var StatusClasses = []StatusClass{Status2xx, Status3xx, Status4xx, Status5xx, StatusTimeout, StatusNetwork, StatusRefused}

// The errors an attempt with no HTTP answer records (sender.Result.Error)
// that name a status class of their own; any other error with no status
// is StatusNetwork.
const (
	ErrorTimeout          = "timeout"
	ErrorForbiddenAddress = "forbidden_address"
)

// StatusRange is the HTTP status range of a class ([lo, hi], both
// inclusive); ok is false for the classes with no status.
func (c StatusClass) StatusRange() (lo, hi int, ok bool) {
	switch c {
	case Status2xx:
		return 200, 299, true
	case Status3xx:
		return 300, 399, true
	case Status4xx:
		return 400, 499, true
	case Status5xx:
		return 500, 599, true
	}
	return 0, 0, false
}

// Matches reports whether an answer with HTTP status (0: none) and error
// errText is of class c.
func (c StatusClass) Matches(status int, errText string) bool {
	if lo, hi, ok := c.StatusRange(); ok {
		return status >= lo && status <= hi
	}
	if status != 0 {
		return false
	}
	switch c {
	case StatusTimeout:
		return errText == ErrorTimeout
	case StatusRefused:
		return errText == ErrorForbiddenAddress
	case StatusNetwork:
		return errText != "" && errText != ErrorTimeout && errText != ErrorForbiddenAddress
	}
	return false
}

// Valid reports whether c is one of StatusClasses.
func (c StatusClass) Valid() bool {
	for _, k := range StatusClasses {
		if c == k {
			return true
		}
	}
	return false
}

// DeliveryFilter selects deliveries of a tenant's delivery log. Zero fields
// select all: EndpointID, EventType and State exact values; Status the last
// attempt's HTTP status; Class its status class; Since and Until bound the
// delivery's creation (its first attempt, CreatedAt), both inclusive.
type DeliveryFilter struct {
	EndpointID   string
	EventType    string
	State        DeliveryState
	Status       int
	Class        StatusClass
	Since, Until time.Time
}

// Matches reports whether d is selected by f, but for the time range (the
// index key's).
func (f DeliveryFilter) Matches(d Delivery) bool {
	switch {
	case f.EndpointID != "" && d.EndpointID != f.EndpointID,
		f.EventType != "" && d.EventType != f.EventType,
		f.State != "" && d.State != f.State,
		f.Status != 0 && d.LastStatus != f.Status,
		f.Class != "" && !f.Class.Matches(d.LastStatus, d.LastError):
		return false
	}
	return true
}

// DeliveryStates lists every state a delivery's record can be in, as the
// delivery log's filter takes them.
var DeliveryStates = []DeliveryState{StatePending, StateDelivered, StateDead, StateCancelled}
