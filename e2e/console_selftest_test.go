//go:build e2e

package e2e

import (
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// hostile are the payloads planted in every field the console shows; each
// sets window.__pwned if a browser runs it.
var hostile = []string{
	`<img src=x onerror=window.__pwned=1>`,
	`</script><script>window.__pwned=1</script>`,
	`javascript:window.__pwned=1`,
}

// The browser checks can fail: a page that runs a planted script, opens a
// dialog or is wider than a phone is caught; a page that shows the payloads
// as text is not.
func TestConsoleHarnessSeesExecution(t *testing.T) {
	t.Parallel()
	pages := map[string]string{
		"/unsafe": `<!doctype html><body><div id=x></div><script>
document.getElementById("x").innerHTML = "<img src=x onerror=window.__pwned=1><a href='javascript:window.__pwned=1'>a</a>"; alert("hi");
</script></body>`,
		"/safe": `<!doctype html><body><p data-test="out" style="overflow-wrap:anywhere">` + html.EscapeString(strings.Join(hostile, "")) + `</p></body>`,
		"/wide": `<!doctype html><body><div data-test="wide" style="width:2000px">wide</div></body>`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(pages[r.URL.Path]))
	}))
	t.Cleanup(srv.Close)

	b := newBrowser(t, phoneWidth, phoneHeight)
	b.navigate(srv.URL + "/unsafe")
	b.waitJS("the planted script to run", stepTimeout, `() => typeof window.__pwned !== "undefined"`)
	bad := strings.Join(b.breaches(), "\n")
	for _, want := range []string{"dialog", "__pwned is set", "planted <img>", "planted <script>", "javascript: URL in a A href"} {
		require.Contains(t, bad, want)
	}

	b = newBrowser(t, phoneWidth, phoneHeight)
	b.navigate(srv.URL + "/safe")
	b.waitText(dt("out"), hostile[1])
	require.Equal(t, strings.Join(hostile, ""), b.text(dt("out")))
	require.Empty(t, b.breaches())
	require.Empty(t, b.overflow())

	b.navigate(srv.URL + "/wide")
	b.wait(dt("wide"))
	require.Contains(t, b.overflow(), "in a 390 px window")
}
