package console

import (
	"bytes"
	"compress/gzip"
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

func read(t *testing.T, fsys fs.FS, name string) string {
	t.Helper()
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return string(b)
}

func TestAssetsHoldThePage(t *testing.T) {
	t.Parallel()
	html := read(t, Assets(), "index.html")
	for _, ref := range []string{`<script type="module" src="app.js"></script>`, `<link rel="stylesheet" href="app.css">`} {
		if !strings.Contains(html, ref) {
			t.Errorf("index.html does not load %s", ref)
		}
	}
	for _, name := range []string{"app.js", "app.css"} {
		if len(read(t, Assets(), name)) == 0 {
			t.Errorf("%s is empty", name)
		}
	}
	if !strings.Contains(read(t, HelloAssets(), "index.html"), "Hello, world.") {
		t.Error("the hello page does not say hello")
	}
	if _, err := fs.Stat(HelloAssets(), "app.js"); err == nil {
		t.Error("the hello page carries the console's script")
	}
}

// gzipSize is the size of b gzipped at the best compression.
func gzipSize(t *testing.T, b []byte) int {
	t.Helper()
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Len()
}

func TestPageWeight(t *testing.T) {
	t.Parallel()
	total, raw := 0, 0
	for _, name := range assetNames(t) {
		b := []byte(read(t, Assets(), name))
		n := gzipSize(t, b)
		t.Logf("%-10s %6d bytes, %6d gzipped", name, len(b), n)
		total += n
		raw += len(b)
	}
	hello := gzipSize(t, []byte(read(t, HelloAssets(), "index.html")))
	t.Logf("console %d bytes gzipped (%d raw) against a budget of %d; hello page %d (%.1fx)",
		total, raw, BudgetGzipBytes, hello, float64(total)/float64(hello))
	if total > BudgetGzipBytes {
		t.Fatalf("the console weighs %d bytes gzipped, over its budget of %d", total, BudgetGzipBytes)
	}
}

// sinks are the ways a script can turn data into markup, code or a
// navigation, and the storage a secret must not reach.
var sinks = []*regexp.Regexp{
	regexp.MustCompile(`innerHTML`),
	regexp.MustCompile(`outerHTML`),
	regexp.MustCompile(`insertAdjacentHTML`),
	regexp.MustCompile(`document\.write`),
	regexp.MustCompile(`\beval\s*\(`),
	regexp.MustCompile(`new\s+Function`),
	regexp.MustCompile(`set(Timeout|Interval)\s*\(\s*['"` + "`" + `]`),
	regexp.MustCompile(`setAttribute\s*\(\s*['"` + "`" + `](on|href|src|style|srcdoc|formaction|action)`),
	regexp.MustCompile(`\bhref\b`),
	regexp.MustCompile(`\bsrc\b`),
	regexp.MustCompile(`srcdoc`),
	regexp.MustCompile(`\.style\b`),
	regexp.MustCompile(`cssText`),
	regexp.MustCompile(`createContextualFragment`),
	regexp.MustCompile(`DOMParser`),
	regexp.MustCompile(`\.on[a-z]+\s*=`),
	regexp.MustCompile(`localStorage`),
	regexp.MustCompile(`sessionStorage`),
	regexp.MustCompile(`document\.cookie`),
	regexp.MustCompile(`indexedDB`),
	regexp.MustCompile(`location\.(assign|replace)|location\.href|window\.open`),
	regexp.MustCompile(`https?://`),
}

// svgNamespace is the SVG namespace's name, which charts.js passes to
// createElementNS: a name, never fetched, so not a remote resource.
const svgNamespace = "'http://www.w3.org/2000/svg'"

// forbidden answers the sinks that js uses.
func forbidden(js string) []string {
	js = strings.ReplaceAll(js, svgNamespace, "''")
	var found []string
	for _, re := range sinks {
		if m := re.FindString(js); m != "" {
			found = append(found, m)
		}
	}
	return found
}

// assetNames are the console's files: index.html and every script and
// style sheet beside it.
func assetNames(t *testing.T) []string {
	t.Helper()
	names := []string{"index.html"}
	for _, pattern := range []string{"*.js", "*.css"} {
		m, err := fs.Glob(Assets(), pattern)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, m...)
	}
	return names
}

func TestScriptHasNoForbiddenSink(t *testing.T) {
	t.Parallel()
	scripts, err := fs.Glob(Assets(), "*.js")
	if err != nil || len(scripts) < 3 {
		t.Fatalf("the console's scripts: %v (%v)", scripts, err)
	}
	for _, name := range scripts {
		if found := forbidden(read(t, Assets(), name)); len(found) > 0 {
			t.Errorf("%s uses forbidden sinks: %q", name, found)
		}
	}
}

// Every module the page loads is one of its own files, imported by a
// relative name: nothing from another origin.
func TestModulesImportOnlyTheConsolesFiles(t *testing.T) {
	t.Parallel()
	imp := regexp.MustCompile(`(?m)^\s*import\b[^'"]*['"]([^'"]+)['"]`)
	for _, name := range []string{"app.js", "overview.js", "log.js", "jobs.js"} {
		for _, m := range imp.FindAllStringSubmatch(read(t, Assets(), name), -1) {
			if !strings.HasPrefix(m[1], "./") {
				t.Errorf("%s imports %q, not a file of its own", name, m[1])
			} else if _, err := fs.Stat(Assets(), strings.TrimPrefix(m[1], "./")); err != nil {
				t.Errorf("%s imports %q, which is not among the assets: %v", name, m[1], err)
			}
		}
	}
}

func TestSinkSearchFindsEachSink(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{
		`n.innerHTML = d.url`, `n.outerHTML=x`, `n.insertAdjacentHTML('beforeend', x)`, `document.write(x)`,
		`eval(x)`, `new Function(x)`, `setTimeout("go()", 1)`, `a.setAttribute('href', d.url)`,
		`a.setAttribute("onclick", x)`, `img.src = d.url`, `a.href = u`, `n.style.color = x`,
		`n.onclick = f`, `localStorage.setItem('k', key)`, `sessionStorage.k = key`, `location.assign(u)`,
		`import('https://cdn.example/x.js')`,
	} {
		if len(forbidden(bad)) == 0 {
			t.Errorf("the sink search misses %q", bad)
		}
	}
	if len(forbidden(`const ns = 'http://www.w3.org/2000/svgx'`)) == 0 {
		t.Error("the SVG namespace's exception lets another URL through")
	}
	if found := forbidden(`node.textContent = d.url; el('td', {text: d.id}); document.createElementNS('http://www.w3.org/2000/svg', 'svg')`); len(found) > 0 {
		t.Errorf("the sink search flags text rendering: %q", found)
	}
}

func TestPageHasNoInlineCodeOrStyle(t *testing.T) {
	t.Parallel()
	html := read(t, Assets(), "index.html")
	for _, tc := range []struct {
		what string
		re   *regexp.Regexp
	}{
		{"a style element", regexp.MustCompile(`<style`)},
		{"a style attribute", regexp.MustCompile(`\sstyle\s*=`)},
		{"an event handler attribute", regexp.MustCompile(`\son[a-z]+\s*=`)},
		{"a javascript: URL", regexp.MustCompile(`(?i)javascript:`)},
		{"a remote resource", regexp.MustCompile(`https?://|//[a-z0-9.-]+\.[a-z]{2,}/`)},
	} {
		if m := tc.re.FindString(html); m != "" {
			t.Errorf("index.html has %s: %q", tc.what, m)
		}
	}
	for _, m := range regexp.MustCompile(`<script\b[^>]*>[^<]*</script>|<script\b[^>]*>`).FindAllString(html, -1) {
		if !strings.Contains(m, ` src="`) || !strings.HasSuffix(m, "></script>") {
			t.Errorf("index.html has an inline script: %q", m)
		}
	}
	sheets, _ := fs.Glob(Assets(), "*.css")
	for _, name := range sheets {
		if m := regexp.MustCompile(`@import|url\(\s*['"]?(https?:)?//`).FindString(read(t, Assets(), name)); m != "" {
			t.Errorf("%s loads a remote resource: %q", name, m)
		}
	}
}

// contract is the DOM contract of I17 that the browser tests use.
var contract = []string{
	"signin", "api-key", "operator-key", "signin-tenant", "signin-operator",
	"nav-endpoints", "nav-dlq", "nav-lookup", "nav-operator", "session-message", "error",
	"endpoints", "endpoint-row", "endpoint-create", "endpoint-url", "endpoint-event-types",
	"endpoint-description", "endpoint-save", "endpoint-rotate", "endpoint-test", "endpoint-toggle",
	"endpoint-edit", "secret", "secret-copy", "dlq", "dlq-row", "dlq-select", "filter-endpoint",
	"filter-type", "filter-since", "filter-until", "filter-apply", "replay-selected", "replay-all",
	"replay-confirm", "replay-count", "job", "next-page", "prev-page", "delivery", "payload",
	"headers", "attempts", "attempt-row", "lookup-event", "lookup-go", "lookup-results",
	"tenants", "tenant-row", "dlq-depth", "alarms", "redrive", "redrive-job",
	"nav-messages", "messages", "message-row", "message-open", "message-state", "messages-type", "messages-endpoint",
	"messages-state", "messages-status", "messages-since", "messages-until", "messages-apply", "messages-next-page",
	"messages-prev-page", "message-event", "message-payload", "message-delivery", "message-delivery-open",
}

func TestDOMContractHooksExist(t *testing.T) {
	t.Parallel()
	html := read(t, Assets(), "index.html")
	js := ""
	scripts, _ := fs.Glob(Assets(), "*.js")
	for _, name := range scripts {
		js += read(t, Assets(), name)
	}
	for _, name := range contract {
		inHTML := strings.Contains(html, `data-test="`+name+`"`)
		inJS := regexp.MustCompile(`'data-test': '` + regexp.QuoteMeta(name) + `'|button\([^;\n]*, '` +
			regexp.QuoteMeta(name) + `',`).MatchString(js)
		if !inHTML && !inJS {
			t.Errorf("no element carries data-test=%q", name)
		}
		if n := strings.Count(html, `data-test="`+name+`"`); n > 1 {
			t.Errorf("data-test=%q is on %d elements of index.html; the tests need one", name, n)
		}
	}
}

func TestEveryControlHasALabel(t *testing.T) {
	t.Parallel()
	html := read(t, Assets(), "index.html")
	ids := regexp.MustCompile(`<(?:input|textarea|select)\b[^>]*\bid="([^"]+)"`).FindAllStringSubmatch(html, -1)
	if len(ids) == 0 {
		t.Fatal("no controls found in index.html")
	}
	for _, m := range ids {
		if !strings.Contains(html, `<label for="`+m[1]+`"`) {
			t.Errorf("control #%s has no <label for>", m[1])
		}
	}
	if n := len(regexp.MustCompile(`<(?:input|textarea|select)\b`).FindAllString(html, -1)); n != len(ids) {
		t.Errorf("%d controls, %d with an id a label can name", n, len(ids))
	}
}
