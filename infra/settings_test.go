package main

import (
	"os"
	"strings"
	"testing"

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
