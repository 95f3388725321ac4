// Package stackoutputs reads the outputs of a deployed hookline stack from the
// file `cdk deploy --outputs-file` writes, for the tests, the demo and the
// local-cloud scripts.
package stackoutputs

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Outputs are the stack outputs a user or a test needs.
type Outputs struct {
	OutboxTableName  string
	StateTableName   string
	DeliveryQueueURL string
	// LaneQueueURL is the tenant lane, deliver's second queue. Empty in the
	// outputs of a release from before the lane: not required.
	LaneQueueURL string
	// FanOutQueueURL is the deferred fan-out queue, which the enqueue
	// function consumes, and FanOutDeadLetterQueueARN its dead-letter
	// queue. Empty in the outputs of a release from before it: not
	// required.
	FanOutQueueURL           string
	FanOutDeadLetterQueueARN string
	DeadLetterQueueURL       string
	DeadLetterQueueARN       string
	// DeadLetterArrivalsQueueARN is the delivery queues' redrive target,
	// which the sweep moves to the DLQ. Empty in the outputs of a release
	// from before it (whose queues redrive to the DLQ itself): not
	// required.
	DeadLetterArrivalsQueueARN string
	EnqueueFailureQueueURL     string
	EnqueueFunctionName        string
	DeliverFunctionName        string
	DLQDepthAlarmName          string
	ApiURL                     string
	ApiID                      string
	ApiFunctionName            string
	OperatorKeySecretARN       string
	SecretsKeyARN              string
	// JobsQueueURL is the replay function's queue of tenants' jobs, from
	// the output ReplayJobsQueueURL (its name kept from when every job was
	// a replay).
	JobsQueueURL       string
	ReplayOpsQueueURL  string
	ReplayFunctionName string
	AlarmTopicARN      string
	TenantDLQAlarmName string
	// OperatorEventBusName and OperatorEventBusARN are the EventBridge bus
	// of hookline's operational events.
	OperatorEventBusName string
	OperatorEventBusARN  string
	MaxReceiveCount      int
	// EgressIPs are the public addresses deliveries leave from with
	// static egress (the output EgressIPs, comma-separated). Empty for a
	// stack without it: not required.
	EgressIPs []string
}

// Load reads the outputs of the stack named "Hookline" (or the only stack)
// from path.
func Load(path string) (Outputs, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Outputs{}, fmt.Errorf("read stack outputs (run make deploy-local first): %w", err)
	}
	var stacks map[string]map[string]string
	if err := json.Unmarshal(raw, &stacks); err != nil {
		return Outputs{}, fmt.Errorf("parse %s: %w", path, err)
	}
	m, ok := stacks["Hookline"]
	if !ok && len(stacks) == 1 {
		for _, v := range stacks {
			m = v
		}
	}
	if m == nil {
		return Outputs{}, fmt.Errorf("%s: no Hookline stack", path)
	}
	o := Outputs{
		OutboxTableName:            m["OutboxTableName"],
		StateTableName:             m["StateTableName"],
		DeliveryQueueURL:           m["DeliveryQueueURL"],
		LaneQueueURL:               m["LaneQueueURL"],
		FanOutQueueURL:             m["FanOutQueueURL"],
		FanOutDeadLetterQueueARN:   m["FanOutDeadLetterQueueARN"],
		DeadLetterQueueURL:         m["DeadLetterQueueURL"],
		DeadLetterQueueARN:         m["DeadLetterQueueARN"],
		DeadLetterArrivalsQueueARN: m["DeadLetterArrivalsQueueARN"],
		EnqueueFailureQueueURL:     m["EnqueueFailureQueueURL"],
		EnqueueFunctionName:        m["EnqueueFunctionName"],
		DeliverFunctionName:        m["DeliverFunctionName"],
		DLQDepthAlarmName:          m["DLQDepthAlarmName"],
		ApiURL:                     m["ApiURL"],
		ApiID:                      m["ApiID"],
		ApiFunctionName:            m["ApiFunctionName"],
		OperatorKeySecretARN:       m["OperatorKeySecretARN"],
		SecretsKeyARN:              m["SecretsKeyARN"],
		JobsQueueURL:               m["ReplayJobsQueueURL"],
		ReplayOpsQueueURL:          m["ReplayOpsQueueURL"],
		ReplayFunctionName:         m["ReplayFunctionName"],
		AlarmTopicARN:              m["AlarmTopicARN"],
		TenantDLQAlarmName:         m["TenantDLQAlarmName"],
		OperatorEventBusName:       m["OperatorEventBusName"],
		OperatorEventBusARN:        m["OperatorEventBusARN"],
	}
	for _, ip := range strings.Split(m["EgressIPs"], ",") {
		if ip = strings.TrimSpace(ip); ip != "" {
			o.EgressIPs = append(o.EgressIPs, ip)
		}
	}
	if o.MaxReceiveCount, err = strconv.Atoi(m["MaxReceiveCount"]); err != nil {
		return o, fmt.Errorf("%s: MaxReceiveCount %q: %w", path, m["MaxReceiveCount"], err)
	}
	for name, v := range map[string]string{"OutboxTableName": o.OutboxTableName, "StateTableName": o.StateTableName, "DeliveryQueueURL": o.DeliveryQueueURL, "DeadLetterQueueURL": o.DeadLetterQueueURL} {
		if v == "" {
			return o, fmt.Errorf("%s: output %s is missing", path, name)
		}
	}
	return o, nil
}

// DeliverQueueURLs are the queues the deliver function consumes: the
// delivery queue, and the tenant lane when the stack has one. A tool that
// waits for deliveries to drain, or counts what waits, reads them all.
func (o Outputs) DeliverQueueURLs() []string {
	if o.LaneQueueURL == "" {
		return []string{o.DeliveryQueueURL}
	}
	return []string{o.DeliveryQueueURL, o.LaneQueueURL}
}

// PipelineQueueURLs are the queues whose messages are events not yet
// delivered: the deliver function's (DeliverQueueURLs) and the deferred
// fan-out queue when the stack has one. A tool that waits for the pipeline
// to drain reads them all: it is not drained while deferred fan-outs wait,
// each of which becomes deliveries on the tenant lane.
func (o Outputs) PipelineQueueURLs() []string {
	urls := o.DeliverQueueURLs()
	if o.FanOutQueueURL != "" {
		urls = append(urls, o.FanOutQueueURL)
	}
	return urls
}
