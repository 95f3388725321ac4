package codeshape

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// The README is a map: the reader follows its links into docs/, and the
// docs' links into each other and into the code. These tests hold the map
// to the tree: every relative link of README.md and docs/*.md names a file
// that exists (and, with a #fragment into a Markdown file, one of its
// headings), and the README's package map names every Go package of the
// product, the public modules, the tests and the scripts.

// docFiles are README.md and docs/*.md, relative to the module root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	require.Greater(t, len(files), 1, "no document under %s/docs", root)
	return files
}

// mdLink is an inline Markdown link or image: [text](target) or
// ![alt](target), the target without a title.
var mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// codeSpan is an inline code span, whose text is not a link.
var codeSpan = regexp.MustCompile("`[^`]*`")

// links lists the link targets of a Markdown document with their line
// numbers, leaving out fenced code blocks and code spans.
func links(src string) (targets []string, lines []int) {
	fence := ""
	for i, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			targets, lines = append(targets, m[1]), append(lines, i+1)
		}
	}
	return targets, lines
}

// anchors are the fragments GitHub gives a Markdown document's headings:
// lower case, punctuation dropped but for hyphens and underscores, spaces
// as hyphens, a repeated one suffixed -1, -2, ...
func anchors(src string) map[string]bool {
	out := map[string]bool{}
	fence := ""
	for _, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		if !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		slug := b.String()
		for n := 1; out[slug]; n++ {
			slug = fmt.Sprintf("%s-%d", b.String(), n)
		}
		out[slug] = true
	}
	return out
}

// brokenLinks lists the relative links of the document at path (its
// source src) that name no file, or no heading of a Markdown file.
func brokenLinks(path, src string) []string {
	var broken []string
	targets, lines := links(src)
	for i, target := range targets {
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		file, frag, _ := strings.Cut(target, "#")
		where := fmt.Sprintf("%s:%d: %s", path, lines[i], target)
		if file == "" {
			if !anchors(src)[frag] {
				broken = append(broken, where+": no such heading")
			}
			continue
		}
		dest := filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
		fi, err := os.Stat(dest)
		if err != nil {
			broken = append(broken, where+": no such file")
			continue
		}
		if frag == "" || fi.IsDir() || !strings.HasSuffix(dest, ".md") {
			continue
		}
		content, err := os.ReadFile(dest)
		if err != nil || !anchors(string(content))[frag] {
			broken = append(broken, where+": no such heading")
		}
	}
	return broken
}

func TestDocLinksResolve(t *testing.T) {
	t.Parallel()
	for _, f := range docFiles(t) {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		require.Empty(t, brokenLinks(f, string(src)), "broken relative links in %s", f)
	}
}

// A broken link, a missing heading and a link in code are told apart.
func TestBrokenLinksAreFound(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other.md"), []byte("# Other\n\n## The deliver path: decide, then apply\n"), 0o600))
	doc := filepath.Join(dir, "doc.md")
	src := "# Doc\n\n## Its own heading\n\n" +
		"[ok](other.md) [ok](other.md#the-deliver-path-decide-then-apply) [ok](#its-own-heading) ![ok](other.md) [ok](.)\n" +
		"[web](https://example.com/x.md) `[code](missing.md)`\n" +
		"```\n[in a block](missing.md)\n```\n" +
		"[gone](missing.md) [no heading](other.md#nope) [no own heading](#nope)\n"
	require.Equal(t, []string{
		doc + ":10: missing.md: no such file",
		doc + ":10: other.md#nope: no such heading",
		doc + ":10: #nope: no such heading",
	}, brokenLinks(doc, src))
}

// mappedTrees are the trees whose every Go package the README's map lists.
var mappedTrees = []string{"functions", "internal", "infra", "outbox", "verify", "e2e", "scripts", "tooling", "events"}

func TestReadmeMapsEveryPackage(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	_, layout, found := strings.Cut(string(readme), "\n## Where each part lives\n")
	require.True(t, found, "README.md has a section \"Where each part lives\"")
	listed := map[string]bool{}
	for _, line := range strings.Split(layout, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasSuffix(f[0], "/") {
			listed[strings.TrimSuffix(f[0], "/")] = true
		}
	}
	var missing []string
	for _, tree := range mappedTrees {
		err := filepath.WalkDir(filepath.Join(root, tree), func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !e.IsDir() {
				return nil
			}
			if strings.HasPrefix(e.Name(), ".") || skipped[e.Name()] {
				return filepath.SkipDir
			}
			goFiles, err := filepath.Glob(filepath.Join(path, "*.go"))
			if err != nil || len(goFiles) == 0 {
				return err
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			if rel = filepath.ToSlash(rel); !listed[rel] {
				missing = append(missing, rel)
			}
			return nil
		})
		require.NoError(t, err)
	}
	require.Empty(t, missing, "packages the README's map (\"Where each part lives\") does not list")
}
