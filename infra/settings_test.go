package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookline/hookline/infra/hookline"
	"github.com/stretchr/testify/require"
)

// settingsHeader is the package comment's line that the settings' list
// follows, after an empty comment line.
const settingsHeader = "// Context values (cdk deploy -c key=value) configure a deployment:\n//\n"

// renderSettings is the package comment's list of the settings: each key,
// padded to a column, then its doc wrapped below that column (a key too
// long for the column on a line of its own).
func renderSettings() string {
	const column, width = 16, 90
	var b strings.Builder
	for _, s := range settings {
		lines := wrap(s.doc, width)
		if len(s.key) < column {
			b.WriteString("//\t" + s.key + strings.Repeat(" ", column-len(s.key)) + lines[0] + "\n")
			lines = lines[1:]
		} else {
			b.WriteString("//\t" + s.key + "\n")
		}
		for _, l := range lines {
			b.WriteString("//\t" + strings.Repeat(" ", column) + l + "\n")
		}
	}
	return b.String()
}

// wrap breaks s into lines of at most width bytes, at spaces.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines, line = append(lines, line), ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}

// TestSettingsAreOneTable: every context key has one row, and a doc.
func TestSettingsAreOneTable(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range settings {
		require.False(t, seen[s.key], "context key %s has two rows", s.key)
		seen[s.key] = true
		require.NotEmpty(t, s.doc, "context key %s has no doc", s.key)
		require.NotNil(t, s.set, "context key %s sets nothing", s.key)
	}
}

// TestPackageCommentListsEverySetting: the package comment's list of
// context values (main.go) is the settings table's, key for key and doc for
// doc, so a key cannot be parsed undocumented or documented unparsed.
// `go test ./infra -run TestPackageCommentListsEverySetting -update`
// rewrites it from the table.
func TestPackageCommentListsEverySetting(t *testing.T) {
	b, err := os.ReadFile("main.go")
	require.NoError(t, err)
	src := string(b)
	start := strings.Index(src, settingsHeader)
	require.GreaterOrEqual(t, start, 0, "main.go's package comment lost the line %q", settingsHeader)
	start += len(settingsHeader)
	end := start
	for strings.HasPrefix(src[end:], "//\t") {
		end += strings.Index(src[end:], "\n") + 1
	}
	want := renderSettings()
	if *update {
		src = src[:start] + want + src[end:]
		require.NoError(t, os.WriteFile("main.go", []byte(src), 0o644))
		end = start + len(want)
	}
	require.Equal(t, want, src[start:end], "main.go's list of context values is not the settings table's: run go test ./infra -run TestPackageCommentListsEverySetting -update")
}

// documentedDefault is the default a setting's doc states, "(default X"
// up to a ";", "," or ")": a number, a duration ("5m", "14 days") or a
// quoted string; prose ("none", "the account") is not matched.
var documentedDefault = regexp.MustCompile(`\(default ("[^"]*"|[0-9][0-9.]*(?: days|[a-z]*))[;,)]`)

// defaultOf parses a documented default as a value of the type of like.
func defaultOf(t *testing.T, key, s string, like any) any {
	t.Helper()
	switch like.(type) {
	case string:
		u, err := strconv.Unquote(s)
		require.NoError(t, err, "context key %s: default %s", key, s)
		return u
	case int:
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "context key %s: default %s", key, s)
		return n
	case float64:
		r, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, "context key %s: default %s", key, s)
		return r
	case time.Duration:
		if days, ok := strings.CutSuffix(s, " days"); ok {
			n, err := strconv.Atoi(days)
			require.NoError(t, err, "context key %s: default %s", key, s)
			return time.Duration(n) * 24 * time.Hour
		}
		d, err := time.ParseDuration(s)
		require.NoError(t, err, "context key %s: default %s", key, s)
		return d
	}
	t.Fatalf("context key %s: a default of type %T is not checked", key, like)
	return nil
}

// TestDocumentedDefaultsAreTheConstructs: a default the package comment
// states for a context key is the one the construct applies
// (hookline.EffectiveProps; the stack's name: DefaultStackName), so the
// comment's copy of a default cannot drift from its one literal.
func TestDocumentedDefaultsAreTheConstructs(t *testing.T) {
	p, err := hookline.EffectiveProps(nil)
	require.NoError(t, err)
	c := &config{Props: p, stackName: DefaultStackName}
	checked := 0
	for _, s := range settings {
		m := documentedDefault.FindStringSubmatch(s.doc)
		if m == nil {
			continue
		}
		got := s.value(c)
		require.Equal(t, defaultOf(t, s.key, m[1], got), got, "context key %s: its doc says %q", s.key, m[0])
		checked++
	}
	require.GreaterOrEqual(t, checked, 26, "the documented defaults checked: the pattern no longer matches the docs")
}

// TestScriptsSetKnownKeys: every context key the Makefile and the scripts
// pass (-c key=value, --context key=value) is a row of settings: the app
// ignores a key it does not know (cdk.json's feature flags share the
// context), so a misspelt one would deploy the default unnoticed.
func TestScriptsSetKnownKeys(t *testing.T) {
	known := map[string]bool{"key": true} // the placeholder of usage texts
	for _, s := range settings {
		known[s.key] = true
	}
	pass := regexp.MustCompile(`(?:-c|--context)[ =]"?([A-Za-z]+)=`)
	files := []string{"../Makefile"}
	require.NoError(t, filepath.WalkDir("../scripts", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return err
	}))
	found := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range pass.FindAllStringSubmatch(string(b), -1) {
			require.True(t, known[m[1]], "%s passes the context key %s, which the app does not read", f, m[1])
			found++
		}
	}
	require.NotZero(t, found, "no context key found in the Makefile and scripts: the pattern no longer matches them")
}
