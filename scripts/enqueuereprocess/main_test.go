package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	t.Parallel()
	outputs := filepath.Join(t.TempDir(), "outputs.json")
	require.NoError(t, os.WriteFile(outputs, []byte(`{"Hookline":{
		"OutboxTableName":"Outbox1","StateTableName":"State1","DeliveryQueueURL":"q-delivery","DeadLetterQueueURL":"q-dlq",
		"EnqueueFailureQueueURL":"q-failures","EnqueueFunctionName":"Enqueue1","MaxReceiveCount":"8"}}`), 0o600))
	tests := []struct {
		name string
		args []string
		want options
		err  string
	}{
		{name: "names from the flags", args: []string{"-queue-url", "q", "-function", "f"},
			want: options{QueueURL: "q", Function: "f", OutboxMargin: time.Hour, Attempts: 5, Visibility: 30 * time.Minute}},
		{name: "names from the stack outputs", args: []string{"-outputs", outputs, "-outbox-fallback"},
			want: options{Outputs: outputs, QueueURL: "q-failures", Function: "Enqueue1", OutboxTable: "Outbox1", OutboxFallback: true,
				OutboxMargin: time.Hour, Attempts: 5, Visibility: 30 * time.Minute}},
		{name: "a flag overrides the outputs", args: []string{"-outputs", outputs, "-function", "Other", "-attempts", "9", "-visibility", "1h"},
			want: options{Outputs: outputs, QueueURL: "q-failures", Function: "Other", OutboxTable: "Outbox1",
				OutboxMargin: time.Hour, Attempts: 9, Visibility: time.Hour}},
		{name: "no queue", args: []string{"-function", "f"}, err: "-queue-url (or -outputs) is required"},
		{name: "no function", args: []string{"-queue-url", "q"}, err: "-function (or -outputs) is required"},
		{name: "fallback without the table", args: []string{"-queue-url", "q", "-function", "f", "-outbox-fallback"}, err: "needs -outbox-table"},
		{name: "visibility over SQS's 12 hours", args: []string{"-queue-url", "q", "-function", "f", "-visibility", "13h"}, err: "-visibility must be within"},
		{name: "no attempt", args: []string{"-queue-url", "q", "-function", "f", "-attempts", "0"}, err: "-attempts must be at least 1"},
		{name: "missing outputs file", args: []string{"-outputs", filepath.Join(t.TempDir(), "none.json")}, err: "read stack outputs"},
		{name: "a stray argument", args: []string{"-queue-url", "q", "-function", "f", "now"}, err: "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(tt.args, io.Discard)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}
