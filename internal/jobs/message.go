package jobs

import (
	"encoding/json"
)

// Kind names what a message on the jobs and operations queues asks for.
type Kind string

// The kinds of message the replay function handles.
const (
	// KindStep runs one step of the job JobID names.
	KindStep Kind = "step"
	// KindSweep moves the DLQ's arrivals in and sweeps the DLQ (the
	// sweep dropped if another ran within Config.SweepGap); with a TenantID, after a job of that tenant, it
	// reads all of the tenant's messages' records and is never dropped.
	KindSweep Kind = "sweep"
	// KindSweepReconcile sweeps the DLQ as KindSweep does, and reconciles
	// every tenant's DLQ depth counter with the dead index, even when the
	// sweep is coalesced away (sent by the sweep's schedule).
	KindSweepReconcile Kind = "sweep_reconcile"
	// KindRecover sends again the jobs idle longer than Config.JobIdle
	// (sent every few minutes by a schedule).
	KindRecover Kind = "recover"
	// KindGauges publishes the per-tenant DLQ depth gauges (every tenant's,
	// or TenantID's only; sent every minute by a schedule).
	KindGauges Kind = "gauges"
	// KindDeadNotice writes the delivery.dead summary of the window
	// DeadNotice names (sent by deliver, delayed, when a death opens the
	// window: opevent.NoticeBody).
	KindDeadNotice Kind = "dead_notice"
	// KindNotice e-mails an operational event to its tenant's notification
	// addresses (package notify): an event of the operator's bus, as the
	// stack's rule sends it to the operations queue, body and all (it has
	// no kind: UnmarshalJSON names it by its source and detail-type).
	KindNotice Kind = "notice"
)

// Message is the body of a message on the jobs and operations queues.
type Message struct {
	Kind Kind `json:"kind"`
	// JobID is the job of a KindStep.
	JobID string `json:"job_id,omitempty"`
	// TenantID, with KindGauges, publishes that tenant's gauge only; with
	// KindSweep, sweeps after a job of that tenant (dlq.Sweeper.Sweep).
	TenantID string `json:"tenant_id,omitempty"`
	// DeadNotice is the window of a KindDeadNotice, as its sender wrote it
	// (opevent.NoticeBody): the operations queue carries it, and the route
	// that handles the kind reads it (package background), so that jobs
	// knows nothing of operational events.
	DeadNotice json.RawMessage `json:"dead_notice,omitempty"`
	// BusEvent is the whole body of a KindNotice: an EventBridge event.
	BusEvent json.RawMessage `json:"-"`
}

// legacy is a message as sent before kinds: booleans, read in this order.
type legacy struct {
	Sweep     bool `json:"sweep"`
	Reconcile bool `json:"reconcile"`
	Recover   bool `json:"recover"`
	Gauges    bool `json:"gauges"`
}

// UnmarshalJSON decodes a message; one without a kind is read as the
// boolean message before kinds and given the kind it meant, in the order
// that message was dispatched: sweep (with reconcile), recover, gauges,
// dead_notice, else a job's step.
func (m *Message) UnmarshalJSON(b []byte) error {
	type plain Message
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*m = Message(p)
	if m.Kind != "" {
		return nil
	}
	var bus struct {
		Source     string `json:"source"`
		DetailType string `json:"detail-type"`
	}
	if json.Unmarshal(b, &bus) == nil && bus.Source != "" && bus.DetailType != "" {
		m.Kind, m.BusEvent = KindNotice, append(json.RawMessage(nil), b...)
		return nil
	}
	var old legacy
	if err := json.Unmarshal(b, &old); err != nil {
		return err
	}
	switch {
	case old.Sweep && old.Reconcile:
		m.Kind = KindSweepReconcile
	case old.Sweep:
		m.Kind = KindSweep
	case old.Recover:
		m.Kind = KindRecover
	case old.Gauges:
		m.Kind = KindGauges
	case len(m.DeadNotice) > 0 && string(m.DeadNotice) != "null":
		m.Kind = KindDeadNotice
	default:
		m.Kind = KindStep
	}
	return nil
}

// Step is the message of one step of job id.
func Step(id string) Message { return Message{Kind: KindStep, JobID: id} }

// Kinds is every kind of message, for the runner's table to be checked
// against.
func Kinds() []Kind {
	return []Kind{KindStep, KindSweep, KindSweepReconcile, KindRecover, KindGauges, KindDeadNotice, KindNotice}
}
