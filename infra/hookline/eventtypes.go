package hookline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookline/hookline/internal/eventtypes"
	"github.com/hookline/hookline/internal/payloadschema"
)

// EventType is one type of the event-type catalog (Props.EventTypes), as
// one file of a catalog directory holds it (LoadEventTypes): docs/producing.md,
// "The event-type catalog".
type EventType struct {
	// Name is the event type, e.g. payment.succeeded: segments of letters,
	// digits, _ or - joined by dots, at most 128 bytes, not one of
	// hookline's own. Required.
	Name string `json:"name"`
	// Description says what the event means. Default: empty.
	Description string `json:"description"`
	// Schema is the payload's JSON Schema (draft 2020-12 unless its
	// $schema names another), self-contained (no $ref to another
	// document). Required.
	Schema json.RawMessage `json:"schema"`
	// Example is a payload of the type, valid against Schema. Required.
	Example json.RawMessage `json:"example"`
	// Deprecated: producers should stop sending it; endpoints may still
	// subscribe to it. Default false.
	Deprecated bool `json:"deprecated"`
	// Validation is what enqueue does with a payload that does not match
	// Schema: "off" (nothing), "warn" (delivered, counted by the
	// SchemaMismatches metric) or "reject" (rejected, schema_mismatch).
	// Default "off".
	Validation string `json:"validation"`
}

// LoadEventTypes reads a catalog directory: every *.json file in dir, one
// EventType each (unknown fields refused). New checks them.
func LoadEventTypes(dir string) ([]EventType, error) {
	types, err := eventtypes.LoadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]EventType, len(types))
	for i, t := range types {
		out[i] = EventType{Name: t.Name, Description: t.Description, Schema: t.Schema, Example: t.Example,
			Deprecated: t.Deprecated, Validation: string(t.Validation)}
	}
	return out, nil
}

// catalogOf is Props.EventTypes as the functions read it, checked whole:
// names, fields, every schema compiled and every example validated
// against its own. Nil: no catalog.
func catalogOf(types []EventType) (*eventtypes.Catalog, error) {
	if len(types) == 0 {
		return nil, nil
	}
	in := make([]eventtypes.Type, len(types))
	for i, t := range types {
		in[i] = eventtypes.Type{Name: t.Name, Description: t.Description, Schema: t.Schema, Example: t.Example,
			Deprecated: t.Deprecated, Validation: eventtypes.Validation(t.Validation)}
	}
	c, err := eventtypes.New(in)
	if err == nil {
		err = payloadschema.Check(c)
	}
	if err != nil {
		return nil, fmt.Errorf("event types: %w", err)
	}
	return c, nil
}

// checkEventTypes refuses a catalog that cannot be deployed.
func (p *Props) checkEventTypes() error {
	_, err := catalogOf(p.EventTypes)
	return err
}

// eventTypesFile is the functions' HOOKLINE_EVENT_TYPES: the catalog's
// file beside their bootstrap, or "" without a catalog.
func eventTypesFile(p Props) string {
	if len(p.EventTypes) == 0 {
		return ""
	}
	return eventtypes.FileName
}

// catalogFunctions are the functions that read the catalog: enqueue
// validates payloads, api shows it and holds subscriptions to it.
var catalogFunctions = []string{"enqueue", "api"}

// CodeDir is a Code whose functions' code is a folder on this machine,
// as CodeFromDir's and BuildFromSource's are: New bundles the event-type
// catalog (Props.EventTypes) beside a copy of that folder's bootstrap. A
// Code that is not one cannot deploy a catalog.
type CodeDir interface {
	// FunctionDir is the folder holding the function name's bootstrap for
	// architecture, or an error saying why there is none.
	FunctionDir(name, architecture string) (string, error)
}

var (
	_ CodeDir = dirCode{}
	_ CodeDir = sourceCode{}
)

// bundleEventTypes replaces the code of the catalog's functions with a
// folder holding their bootstrap and the catalog (eventtypes.FileName),
// staged under the user's cache directory, so the catalog deploys as the
// code does, on AWS and on the local cloud alike (no custom resource, and
// none of Lambda's 4 KB of environment variables).
func bundleEventTypes(code map[string]awslambda.Code, src Code, architecture string, types []EventType) error {
	catalog, err := catalogOf(types)
	if err != nil || catalog == nil {
		return err
	}
	dirs, ok := src.(CodeDir)
	if !ok {
		return fmt.Errorf("event types: the catalog is bundled with the functions' code, which Props.Code (%T) does not give as a folder: use CodeFromDir or BuildFromSource, or implement hookline.CodeDir", src)
	}
	file, err := eventtypes.Marshal(catalog.Types())
	if err != nil {
		return err
	}
	for _, fn := range catalogFunctions {
		dir, err := dirs.FunctionDir(fn, architecture)
		if err != nil {
			return err
		}
		staged, err := stageWithCatalog(dir, file)
		if err != nil {
			return fmt.Errorf("event types: bundle with the %s function: %w", fn, err)
		}
		code[fn] = awslambda.Code_FromAsset(jsii.String(staged), nil)
	}
	return nil
}

// stageWithCatalog copies dir's bootstrap and writes catalog beside it in
// a folder of their own (named by both, so two catalogs or two builds
// never share one), and returns that folder.
func stageWithCatalog(dir string, catalog []byte) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.New()
	sum.Write([]byte(dir + "\x00"))
	sum.Write(catalog)
	out := filepath.Join(cache, "hookline-build", "catalog", hex.EncodeToString(sum.Sum(nil)[:12]))
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	if err := copyFile(filepath.Join(dir, "bootstrap"), filepath.Join(out, "bootstrap"), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(out, eventtypes.FileName), catalog, 0o644); err != nil {
		return "", err
	}
	return out, nil
}

// copyFile copies src to dst (through a temporary file renamed into
// place, so a concurrent synth never sees half a bootstrap).
func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".bootstrap-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}
