package hookline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/eventtypes"
)

// stagedFile is the content of the file name in the asset the function id
// deploys, and whether it is there.
func (s *synthesized) stagedFile(t *testing.T, id, name string) (string, bool) {
	t.Helper()
	key, ok := dig(t, s.resource(t, id, "AWS::Lambda::Function"), "Properties", "Code", "S3Key").(string)
	require.True(t, ok)
	b, err := os.ReadFile(filepath.Join(s.outdir, "asset."+strings.TrimSuffix(key, ".zip"), name))
	if os.IsNotExist(err) {
		return "", false
	}
	require.NoError(t, err)
	return string(b), true
}

// shipment is a valid catalog type.
func shipment() EventType {
	return EventType{Name: "shipment.delivered", Description: "A shipment arrived.", Validation: "reject",
		Schema:  json.RawMessage(`{"type":"object","required":["weight_grams"],"properties":{"weight_grams":{"type":"integer","minimum":1}}}`),
		Example: json.RawMessage(`{"weight_grams": 1250}`)}
}

// Without a catalog nothing changes: no file beside any bootstrap, no
// variable. With one, the enqueue and api functions (and no other) deploy
// event-types.json beside their bootstrap, the catalog checked and
// compacted, and HOOKLINE_EVENT_TYPES names it.
func TestEventTypeCatalogIsBundledWithEnqueueAndAPI(t *testing.T) {
	// Not parallel: the jsii runtime is one process (stack_test.go).
	off := synth(t, Props{})
	for _, fn := range []string{off.enqueueFn, off.apiFn, off.deliverFn, off.replayFn} {
		require.NotContains(t, off.envOf(t, fn), "HOOKLINE_EVENT_TYPES")
		_, ok := off.stagedFile(t, fn, eventtypes.FileName)
		require.False(t, ok, "no catalog, no file")
	}

	s := synth(t, Props{EventTypes: []EventType{shipment()}})
	for _, fn := range []string{s.enqueueFn, s.apiFn} {
		require.Equal(t, eventtypes.FileName, s.envOf(t, fn)["HOOKLINE_EVENT_TYPES"])
		file, ok := s.stagedFile(t, fn, eventtypes.FileName)
		require.True(t, ok, "the catalog beside the bootstrap")
		c, err := eventtypes.Parse([]byte(file))
		require.NoError(t, err)
		require.Len(t, c.Types(), 1)
		require.Equal(t, eventtypes.ValidationReject, c.Types()[0].Validation)
		require.JSONEq(t, `{"weight_grams":1250}`, string(c.Types()[0].Example))
	}
	require.Equal(t, "enqueue binary", s.stagedBootstrap(t, s.enqueueFn), "the function's own bootstrap, copied")
	require.Equal(t, "api binary", s.stagedBootstrap(t, s.apiFn))
	for _, fn := range []string{s.deliverFn, s.replayFn} {
		require.NotContains(t, s.envOf(t, fn), "HOOKLINE_EVENT_TYPES")
		_, ok := s.stagedFile(t, fn, eventtypes.FileName)
		require.False(t, ok)
	}
}

// A catalog that cannot be deployed is refused before anything is made,
// the error naming the type and what is wrong.
func TestEventTypeCatalogIsCheckedAtSynth(t *testing.T) {
	// Not parallel: the jsii runtime is one process (stack_test.go).
	for _, tc := range []struct {
		name string
		edit func(*EventType)
		want string
	}{
		{"reserved name", func(e *EventType) { e.Name = "delivery.dead" }, `event types: event type "delivery.dead": reserved`},
		{"bad name", func(e *EventType) { e.Name = "shipment delivered" }, "the name must be"},
		{"bad validation", func(e *EventType) { e.Validation = "strict" }, `validation "strict": want off, warn or reject`},
		{"schema does not compile", func(e *EventType) { e.Schema = json.RawMessage(`{"type":12}`) }, `"shipment.delivered": schema`},
		{"example the schema refuses", func(e *EventType) { e.Example = json.RawMessage(`{"weight_grams":0}`) }, "the example does not validate against the schema: at /weight_grams: keyword minimum"},
		{"no example", func(e *EventType) { e.Example = nil }, "example is required"},
	} {
		typ := shipment()
		tc.edit(&typ)
		app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
		_, err := New(awscdk.NewStack(app, jsii.String("Bad"), nil), "Default", &Props{Code: CodeFromDir(fakeAssets(t)), EventTypes: []EventType{typ}})
		require.ErrorContains(t, err, tc.want, tc.name)
	}
}

// opaqueCode is a Code that is not a folder (CodeDir).
type opaqueCode struct{}

func (opaqueCode) FunctionCode(string, string) (awslambda.Code, error) {
	return awslambda.Code_FromInline(jsii.String("x")), nil
}

// A catalog needs the functions' code as a folder to bundle it with.
func TestEventTypeCatalogNeedsCodeInAFolder(t *testing.T) {
	// Not parallel: the jsii runtime is one process (stack_test.go).
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
	_, err := New(awscdk.NewStack(app, jsii.String("Opaque"), nil), "Default", &Props{Code: opaqueCode{}, EventTypes: []EventType{shipment()}})
	require.ErrorContains(t, err, "CodeFromDir or BuildFromSource")
}

// LoadEventTypes reads a catalog folder, the local stack's among them.
func TestLoadEventTypes(t *testing.T) {
	// Not parallel: its neighbours use the jsii runtime (stack_test.go).
	types, err := LoadEventTypes("../../e2e/testdata/catalog")
	require.NoError(t, err)
	c, err := catalogOf(types)
	require.NoError(t, err, "the local stack's catalog deploys")
	shipment, ok := c.Lookup("shipment.delivered")
	require.True(t, ok)
	require.Equal(t, eventtypes.ValidationReject, shipment.Validation)
	_, err = LoadEventTypes(t.TempDir())
	require.ErrorContains(t, err, "no *.json file")
}
