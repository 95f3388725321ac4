package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// UpgradeFixturePath is where the upgrade test's writer (tooling/cmd/upgrade)
// leaves what it wrote through each earlier release, for the end-to-end
// test TestUpgradeKeptEverything to find after the upgrade.
const UpgradeFixturePath = ".local/upgrade-fixture.json"

// UpgradeFixture is what the upgrade test wrote through the earlier
// releases, one phase per release deployed.
type UpgradeFixture struct {
	Phases []UpgradePhase `json:"phases"`
}

// UpgradePhase is the data written through one earlier release: a tenant
// with an endpoint whose receiver answered 200 and one whose receiver
// answered 400, events to both, and a replay job.
type UpgradePhase struct {
	// Release is the commit deployed, and Context its context
	// (sorted key=value, comma-separated).
	Release string `json:"release"`
	Context string `json:"context,omitempty"`
	// TenantID and APIKey are the tenant's; the key was made by the
	// release's api.
	TenantID string `json:"tenant_id"`
	APIKey   string `json:"api_key"`
	// OK and Dead are the endpoints (their signing secrets, sealed by the
	// release's api, kept here to verify signatures after the upgrade).
	OK   UpgradeEndpoint `json:"ok"`
	Dead UpgradeEndpoint `json:"dead"`
	// Events are the event ids written to the outbox.
	Events []string `json:"events"`
	// LoggedEvents says whether the events carry the message log's
	// sharded key (log_pk): false for a release before by_tenant_shard,
	// whose producers wrote without it (such events leave GET /v1/events
	// when by_tenant goes, docs/deploying.md).
	LoggedEvents bool `json:"logged_events"`
	// Delivered and DeadDeliveries are the delivery ids in each state.
	Delivered      []string `json:"delivered"`
	DeadDeliveries []string `json:"dead_deliveries"`
	// ReplayJob is a replay job's id (by ids, of one dead delivery, which
	// died again).
	ReplayJob string `json:"replay_job"`
	// Waiting is an endpoint whose receiver answered 429 with a
	// Retry-After (UpgradeRetryAfter), and Pending its deliveries, pending
	// across the upgrade: their next attempt is made after it, by the new
	// code, from the message the release queued.
	Waiting UpgradeEndpoint `json:"waiting,omitzero"`
	Pending []string        `json:"pending,omitempty"`
	// Cancelling is an endpoint of the same receiver whose pending
	// deliveries, Cancelled, the release cancelled (cancel-pending), for a
	// release that has the route; empty otherwise. Their messages come
	// back after the upgrade and must send nothing.
	Cancelling UpgradeEndpoint `json:"cancelling,omitzero"`
	Cancelled  []string        `json:"cancelled,omitempty"`
}

// UpgradeRetryAfter is the Retry-After the waiting receiver answers: long
// enough that the pending deliveries' next attempt comes after the
// upgrade's deploys, short enough for the end-to-end check to see it.
const UpgradeRetryAfter = 120

// UpgradeEndpoint is an endpoint of an UpgradePhase.
type UpgradeEndpoint struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
}

// LoadUpgradeFixture reads the fixture at path; a missing file is an
// empty fixture and fs.ErrNotExist.
func LoadUpgradeFixture(path string) (UpgradeFixture, error) {
	var f UpgradeFixture
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, err
	}
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// AppendUpgradePhase adds p to the fixture at path.
func AppendUpgradePhase(path string, p UpgradePhase) error {
	f, err := LoadUpgradeFixture(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f.Phases = append(f.Phases, p)
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}
