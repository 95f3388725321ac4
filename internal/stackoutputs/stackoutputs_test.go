package stackoutputs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// write saves outputs as `cdk deploy --outputs-file` does, one stack.
func write(t *testing.T, outputs map[string]string) string {
	t.Helper()
	b, err := json.Marshal(map[string]map[string]string{"Hookline": outputs})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "outputs.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

// required are the outputs every release had.
func required() map[string]string {
	return map[string]string{
		"OutboxTableName": "outbox", "StateTableName": "state", "DeliveryQueueURL": "https://sqs/delivery",
		"DeadLetterQueueURL": "https://sqs/dlq", "MaxReceiveCount": "8",
	}
}

// A stack with the tenant lane: its URL is read, and the deliver function's
// queues are both.
func TestLoadLane(t *testing.T) {
	t.Parallel()
	m := required()
	m["LaneQueueURL"] = "https://sqs/lane"
	o, err := Load(write(t, m))
	require.NoError(t, err)
	require.Equal(t, "https://sqs/lane", o.LaneQueueURL)
	require.Equal(t, []string{"https://sqs/delivery", "https://sqs/lane"}, o.DeliverQueueURLs())
	require.Equal(t, []string{"https://sqs/delivery", "https://sqs/lane"}, o.PipelineQueueURLs(), "no fan-out queue: the deliver function's")
}

// A stack with the deferred fan-out queue: its URL and its DLQ's ARN are
// read; the deliver function's queues stay the delivery queue and the lane,
// and a drain waits on the fan-out queue too.
func TestLoadFanOut(t *testing.T) {
	t.Parallel()
	m := required()
	m["LaneQueueURL"] = "https://sqs/lane"
	m["FanOutQueueURL"] = "https://sqs/fanout"
	m["FanOutDeadLetterQueueARN"] = "arn:aws:sqs:eu-west-1:111122223333:fanout-dlq"
	o, err := Load(write(t, m))
	require.NoError(t, err)
	require.Equal(t, "https://sqs/fanout", o.FanOutQueueURL)
	require.Equal(t, "arn:aws:sqs:eu-west-1:111122223333:fanout-dlq", o.FanOutDeadLetterQueueARN)
	require.Equal(t, []string{"https://sqs/delivery", "https://sqs/lane"}, o.DeliverQueueURLs())
	require.Equal(t, []string{"https://sqs/delivery", "https://sqs/lane", "https://sqs/fanout"}, o.PipelineQueueURLs())
}

// The outputs of a release from before the lane still load: the lane is
// not required, and the deliver function's queues are the delivery queue.
func TestLoadWithoutLane(t *testing.T) {
	t.Parallel()
	o, err := Load(write(t, required()))
	require.NoError(t, err)
	require.Empty(t, o.LaneQueueURL)
	require.Equal(t, []string{"https://sqs/delivery"}, o.DeliverQueueURLs())
	require.Empty(t, o.FanOutQueueURL, "nor is the fan-out queue")
	require.Equal(t, []string{"https://sqs/delivery"}, o.PipelineQueueURLs())
	require.Equal(t, 8, o.MaxReceiveCount)
}

// A required output missing is refused by name.
func TestLoadMissing(t *testing.T) {
	t.Parallel()
	m := required()
	delete(m, "DeliveryQueueURL")
	_, err := Load(write(t, m))
	require.ErrorContains(t, err, "output DeliveryQueueURL is missing")
}

// A stack with static egress: its addresses are read one by one; without
// it (the outputs of most stacks), none.
func TestLoadEgressIPs(t *testing.T) {
	t.Parallel()
	m := required()
	m["EgressIPs"] = "203.0.113.10,198.51.100.7"
	o, err := Load(write(t, m))
	require.NoError(t, err)
	require.Equal(t, []string{"203.0.113.10", "198.51.100.7"}, o.EgressIPs)

	o, err = Load(write(t, required()))
	require.NoError(t, err)
	require.Empty(t, o.EgressIPs, "not required")
}
