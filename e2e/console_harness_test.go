//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// The console's browser tests drive Debian's headless Chromium (scripts/test.sh
// installs it when it is missing). Set HOOKLINE_SCREENSHOTS=1 to rewrite the
// screenshots under docs/console/ (make screenshots).

// chromiumPath is where Debian's chromium package puts the browser.
const chromiumPath = "/usr/bin/chromium"

// screenshotsEnv names the variable that makes the tests write docs/console/*.png.
const screenshotsEnv = "HOOKLINE_SCREENSHOTS"

// stepTimeout bounds each browser step (a navigation, a wait, a click).
const stepTimeout = 20 * time.Second

// Desktop and phone widths the console is checked at.
const (
	desktopWidth, desktopHeight = 1280, 900
	phoneWidth, phoneHeight     = 390, 844
)

// browser is one headless Chromium tab, with what the page did that a test
// must see: JavaScript dialogs opened and console messages.
type browser struct {
	t   *testing.T
	ctx context.Context

	mu      sync.Mutex
	dialogs []string
	console []string
}

// dt is the CSS selector of a data-test hook.
func dt(name string) string { return `[data-test="` + name + `"]` }

// newBrowser starts a headless Chromium of the given window size for one test;
// it is closed when the test ends. A missing browser fails the test loudly.
func newBrowser(t *testing.T, width, height int) *browser {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("the console's browser tests need Chromium at %s (Debian: apt-get install chromium; make test installs it): %v", chromiumPath, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.NoSandbox, // the tests run as root in CI
		chromedp.DisableGPU,
		chromedp.WindowSize(width, height),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx}
	// Start the browser and open the tab before listening, so that no event
	// of the tab's start is missed.
	// The first step starts the browser, which lives as long as that step's
	// context: give it the tab's own, not a step's timeout.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")), "starting %s", chromiumPath)
	require.NoError(t, b.run(chromedp.EmulateViewport(int64(width), int64(height))))
	require.NoError(t, chromedp.Listen(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			b.mu.Lock()
			b.dialogs = append(b.dialogs, fmt.Sprintf("%s: %q", d.Type, d.Message))
			b.mu.Unlock()
			// The dialog blocks the page: dismiss it (off the listener).
			go func() {
				_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
			}()
		}
	}))
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.console = append(b.console, fmt.Sprintf("%s: %s", m.Type, m.Text))
			b.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		if t.Failed() {
			b.mu.Lock()
			defer b.mu.Unlock()
			for _, c := range b.console {
				t.Logf("browser console: %s", c)
			}
		}
	})
	return b
}

// run runs one step within stepTimeout.
func (b *browser) run(steps ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	return chromedp.Do(ctx, steps...)
}

// must runs steps and fails the test with what it was doing if they fail.
func (b *browser) must(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := b.run(steps...); err != nil {
		b.t.Fatalf("browser: %s: %v (page text: %q)", what, err, b.pageText())
	}
}

// pageText is the visible text of the page, for failure messages.
func (b *browser) pageText() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	if len(s) > 2000 {
		s = s[:2000] + "…"
	}
	return s
}

// navigate opens a URL and waits for its document.
func (b *browser) navigate(url string) {
	b.t.Helper()
	b.must("navigate", chromedp.Navigate(url))
}

// wait waits until the selector matches a visible element.
func (b *browser) wait(sel string) {
	b.t.Helper()
	b.must("wait for "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
}

// click clicks the first visible element the selector matches. Finding it
// and clicking it are one step in the page: a list that re-renders between
// a lookup and a click (the dead letters reload when their link is
// clicked) would otherwise take the click with a node it has detached.
func (b *browser) click(sel string) {
	b.t.Helper()
	b.waitJS("a visible "+sel+" to click", stepTimeout, `(sel) => {
		for (const e of document.querySelectorAll(sel)) {
			if (e.getClientRects().length === 0) continue;
			e.click();
			return true;
		}
		return false;
	}`, sel)
}

// callAPI opens the dead letters, so that the page calls the API, unless
// the page has already signed out: one of its own calls (a refresh of the
// endpoints' health) may have ended the session first. The check and the
// click are one step in the page, so the sign-out cannot fall between them.
func (b *browser) callAPI() {
	b.t.Helper()
	evalIn[bool](b, `(() => {
		const nav = document.querySelector('[data-test="nav-dlq"]');
		if (!nav || nav.offsetParent === null) return false;
		nav.click();
		return true;
	})()`)
}

// typ replaces the value of an input with text, typed as keys.
func (b *browser) typ(sel, text string) {
	b.t.Helper()
	b.must("type into "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
	evalIn[bool](b, fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = ""; e.dispatchEvent(new Event("input", {bubbles: true})); return true; })()`, sel))
	b.must("type into "+sel, chromedp.SendKeys(chromedp.CSS(sel), text))
	if got := evalIn[string](b, fmt.Sprintf(`document.querySelector(%q).value`, sel)); got != text {
		b.t.Fatalf("browser: typed %q into %s, which holds %q", text, sel, got)
	}
}

// text is the text content of the first element the selector matches.
func (b *browser) text(sel string) string {
	b.t.Helper()
	b.wait(sel)
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
	require.NoError(b.t, err, "text of %s", sel)
	return s
}

// eval evaluates a JavaScript expression in the page.
func evalIn[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(b.t, err, "evaluate %s", expr)
	return v
}

// attr is an attribute of the first element the selector matches ("" when
// it has none).
func (b *browser) attr(sel, name string) string {
	b.t.Helper()
	b.wait(sel)
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(sel), name))
	require.NoError(b.t, err, "attribute %s of %s", name, sel)
	return v.Value
}

// count is how many elements the selector matches now.
func (b *browser) count(sel string) int {
	b.t.Helper()
	return evalIn[int](b, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel))
}

// waitJS waits until a JavaScript function of the given arguments returns a
// truthy value (polled on each animation frame), failing after timeout.
func (b *browser) waitJS(what string, timeout time.Duration, fn string, args ...any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.PollFunction[any](fn, chromedp.WithPollingArgs(args...), chromedp.WithPollingTimeout(timeout)))
	if err != nil {
		b.t.Fatalf("browser: waiting for %s: %v (page text: %q)", what, err, b.pageText())
	}
}

// waitText waits until the element the selector matches is shown and
// contains s (a hidden view keeps the text it last showed).
func (b *browser) waitText(sel, s string) {
	b.t.Helper()
	b.waitJS(fmt.Sprintf("%s to contain %q", sel, s), stepTimeout,
		`(sel, s) => { const e = document.querySelector(sel); return !!e && e.getClientRects().length > 0 && e.textContent.includes(s); }`, sel, s)
}

// waitAttr waits until the element the selector matches has attribute name
// equal to value.
func (b *browser) waitAttr(sel, name, value string, timeout time.Duration) {
	b.t.Helper()
	b.waitJS(fmt.Sprintf("%s[%s=%q]", sel, name, value), timeout,
		`(sel, n, v) => { const e = document.querySelector(sel); return !!e && e.getAttribute(n) === v; }`, sel, name, value)
}

// screenshot saves the page as docs/console/<name>.png when
// HOOKLINE_SCREENSHOTS=1; otherwise it does nothing, so that a test run
// leaves the tracked images alone.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	if os.Getenv(screenshotsEnv) != "1" {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(b.t, err, "screenshot %s", name)
	dir := filepath.Join("..", "docs", "console")
	require.NoError(b.t, os.MkdirAll(dir, 0o755))
	require.NoError(b.t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
	b.t.Logf("screenshot: docs/console/%s.png", name)
}

// pwnedGlobal is the global every hostile payload sets when it runs.
const pwnedGlobal = "__pwned"

// breaches lists what hostile data made the page do: JavaScript dialogs
// opened and the pwned global set. Empty when nothing executed.
func (b *browser) breaches() []string {
	b.t.Helper()
	b.mu.Lock()
	out := append([]string(nil), b.dialogs...)
	b.mu.Unlock()
	for i := range out {
		out[i] = "a JavaScript dialog opened: " + out[i]
	}
	if set := evalIn[bool](b, `typeof window.`+pwnedGlobal+` !== "undefined"`); set {
		out = append(out, "window."+pwnedGlobal+" is set: a planted script ran")
	}
	// Parsed as HTML, a payload is an element even where the CSP keeps it
	// from running.
	return append(out, evalIn[[]string](b, plantedElements)...)
}

// plantedElements lists the elements and URLs the hostile payloads become
// when a page parses them as HTML or puts them in a link.
const plantedElements = `(() => {
  const out = [];
  if (document.querySelector('img[src="x"]')) out.push('a planted <img> element is in the page');
  for (const s of document.querySelectorAll('script')) {
    if (s.textContent.includes('__pwned')) out.push('a planted <script> element is in the page');
  }
  for (const e of document.querySelectorAll('[href], [src], [action], [formaction]')) {
    for (const n of ['href', 'src', 'action', 'formaction']) {
      const v = e.getAttribute(n);
      if (v && v.trim().toLowerCase().startsWith('javascript:')) out.push('a javascript: URL in a ' + e.tagName + ' ' + n);
    }
  }
  return out;
})()`

// bodyText is the page's whole visible text.
func (b *browser) bodyText() string {
	b.t.Helper()
	return evalIn[string](b, `document.body.innerText`)
}

// assertSafe fails the test if the page ran any planted script.
func (b *browser) assertSafe(where string) {
	b.t.Helper()
	if bad := b.breaches(); len(bad) > 0 {
		b.t.Fatalf("%s: hostile data executed: %s", where, strings.Join(bad, "; "))
	}
}

// overflow says how the page is wider than its window, or "" when neither
// the document nor the body overflows horizontally.
func (b *browser) overflow() string {
	b.t.Helper()
	sizes := evalIn[[]int](b, `[document.documentElement.scrollWidth, document.body.scrollWidth, window.innerWidth]`)
	require.Len(b.t, sizes, 3)
	if sizes[0] > sizes[2] || sizes[1] > sizes[2] {
		return fmt.Sprintf("the page is %d px wide (body %d px) in a %d px window; past its edge: %s",
			sizes[0], sizes[1], sizes[2], evalIn[string](b, widestElements))
	}
	return ""
}

// widestElements names the outermost visible elements whose right edge is
// past the window's, for a failure message.
const widestElements = `(() => {
  const out = [];
  for (const e of document.body.querySelectorAll('*')) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.right <= window.innerWidth + 0.5) continue;
    if (e.parentElement && e.parentElement.getBoundingClientRect().right > window.innerWidth + 0.5) continue;
    const id = e.id ? '#' + e.id : '';
    const test = e.dataset.test ? '[data-test="' + e.dataset.test + '"]' : '';
    const cls = e.className && typeof e.className === 'string' ? '.' + e.className.trim().split(/\s+/).join('.') : '';
    out.push(e.tagName.toLowerCase() + id + test + cls + ' (right edge ' + Math.round(r.right) + ' px)');
    if (out.length === 5) break;
  }
  return out.join(', ') || '(none found)';
})()`

// noHorizontalOverflow fails if the page is wider than its window.
func (b *browser) noHorizontalOverflow(where string) {
	b.t.Helper()
	if o := b.overflow(); o != "" {
		b.t.Fatalf("%s: horizontal overflow: %s", where, o)
	}
}
