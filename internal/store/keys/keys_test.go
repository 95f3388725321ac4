package keys

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// prefixLiteral matches a string literal that begins with a key prefix, as
// "TENANT#" or "DELIVERY#" do.
var prefixLiteral = regexp.MustCompile(`"[A-Z][A-Z_]*#`)

// TestPrefixesOnlyHere fails when a key prefix literal is spelled in a
// non-test file of the store or storefake: keys are built in this package.
func TestPrefixesOnlyHere(t *testing.T) {
	t.Parallel()
	var files []string
	for _, dir := range []string{"..", "../storefake"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.NotEmpty(t, files)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, line := range strings.Split(string(src), "\n") {
			if m := prefixLiteral.FindString(line); m != "" {
				t.Errorf("%s:%d: key prefix %s spelled outside internal/store/keys", f, i+1, m)
			}
		}
	}
}

func TestBuilders(t *testing.T) {
	t.Parallel()
	require.Equal(t, "TENANT#t1", Tenant("t1"))
	require.Equal(t, "TENANT#t1#DEAD", TenantIndex("t1", "DEAD"))
	require.Equal(t, "TENANT#t1#DEAD#15", DeadShard("t1", 15))
	require.Equal(t, "TENANT#t1#DLOG#15", LogShard("t1", 15))
	require.Equal(t, "ENDPOINT#e1", Endpoint("e1"))
	require.Equal(t, "DELIVERY#d1", Delivery("d1"))
	require.Equal(t, "GATE#t1#e1", Gate("t1", "e1"))
	require.Equal(t, "DEADWINDOW#t1#e1#s", DeadWindow("t1", "e1", "s"))
}

// A "<time>#<id>" sort key sorts in time order, to the nanosecond, whatever
// the time's zone, then by id.
func TestTimeIDSortsInTimeOrder(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 12, 0, 5, 0, time.UTC)
	require.Equal(t, "2026-12-01T12:00:05.000000000Z#d_1", TimeID(at, "d_1"))
	require.Equal(t, TimeID(at, "d_1"), TimeID(at.In(time.FixedZone("X", 3600)), "d_1"), "written in UTC")
	require.Less(t, TimeID(at, "d_2"), TimeID(at.Add(time.Nanosecond), "d_1"))
	require.Less(t, TimeID(at, "d_1"), TimeID(at, "d_2"))
}
