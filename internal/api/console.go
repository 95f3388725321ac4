package api

import (
	"bytes"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/hookline/hookline/internal/console"
)

// ConsoleRoutes are the console's routes, as API Gateway route keys: the
// stack adds them beside Routes(). They serve pages, not JSON, and take no
// credential (the page signs in against the API itself), so they are not
// operations of docs/openapi.yaml, which documents Routes() only. The page
// itself, /console/, and the page-weight baseline, /console-hello/, end with
// a slash, which no API Gateway route path can: they reach the function
// through the catch-all $default route, as every other unknown path does.
//
// GET /console redirects to <base>/console/index.html, an absolute path
// (basePath), not to console/: the local cloud (ministack 1.5.33) hands the
// function "/console" for a request to /console/, so a redirect to the
// directory would loop there. The page's relative links (app.js, app.css)
// resolve under /console/ from either address. The hello page has no links
// and is served at /console-hello and /console-hello/ alike.
func ConsoleRoutes() []string {
	return []string{"GET /console", "GET /console/{file}", "GET /console-hello"}
}

// consolePaths are the paths ending in "/" that the router takes as they are
// (cleanPathsOnly refuses every other trailing slash).
var consolePaths = []string{"/console/", "/console-hello/"}

// consoleCSP is the console's Content-Security-Policy, framed by ancestors
// (nil: 'none').
func consoleCSP(ancestors []string) string {
	fa := "'none'"
	if len(ancestors) > 0 {
		fa = strings.Join(ancestors, " ")
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors " + fa
}

// consoleTypes are the content types of the files the console serves; a file
// of another kind is not served.
var consoleTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".png":  "image/png",
	".svg":  "image/svg+xml",
	".ico":  "image/x-icon",
}

// pages serves the files at the root of fsys: index.html at the directory's
// own path, any other regular file at its name. No directory is listed.
type pages struct {
	fsys fs.FS
	csp  string
}

// serve answers GET of name (index.html for ""), with the security headers
// on every answer, a 404 included.
func (pg pages) serve(w http.ResponseWriter, r *http.Request, name string) {
	h := w.Header()
	h.Set("Content-Security-Policy", pg.csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if xfo := frameOptions(pg.csp); xfo != "" {
		h.Set("X-Frame-Options", xfo)
	}
	if name == "" {
		name = "index.html"
	}
	ct, known := consoleTypes[path.Ext(name)]
	if !known || strings.ContainsAny(name, `/\`) || !fs.ValidPath(name) {
		writeProblem(w, problem(http.StatusNotFound, "the console has no file %q", name))
		return
	}
	b, err := fs.ReadFile(pg.fsys, name)
	if err != nil {
		// A directory, or no such file: the same answer, no listing.
		writeProblem(w, problem(http.StatusNotFound, "the console has no file %q", name))
		return
	}
	h.Set("Content-Type", ct)
	// Revalidated on every load: a deployment changes the files under the
	// same names.
	h.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
}

// frameOptions is X-Frame-Options for browsers that ignore frame-ancestors:
// DENY when no page may frame the console, SAMEORIGIN when only 'self' may;
// with other origins, "" (the header cannot name them: the CSP alone says).
func frameOptions(csp string) string {
	switch {
	case strings.HasSuffix(csp, "frame-ancestors 'none'"):
		return "DENY"
	case strings.HasSuffix(csp, "frame-ancestors 'self'"):
		return "SAMEORIGIN"
	}
	return ""
}

// consoleHandler registers the console's routes on mux.
func (s *Server) consoleHandler(mux *http.ServeMux) {
	csp := consoleCSP(s.FrameAncestors)
	app := pages{fsys: s.Console, csp: csp}
	if app.fsys == nil {
		app.fsys = console.Assets()
	}
	hello := pages{fsys: s.ConsoleHello, csp: csp}
	if hello.fsys == nil {
		hello.fsys = console.HelloAssets()
	}
	get := func(pattern string, serve http.HandlerFunc) { mux.HandleFunc("GET "+pattern, serve) }
	get("/console", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", basePath(r, "/console")+"/console/index.html")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusMovedPermanently)
	})
	get("/console/{$}", func(w http.ResponseWriter, r *http.Request) { app.serve(w, r, "") })
	get("/console/{file}", func(w http.ResponseWriter, r *http.Request) { app.serve(w, r, r.PathValue("file")) })
	get("/console-hello/{$}", func(w http.ResponseWriter, r *http.Request) { hello.serve(w, r, "") })
	get("/console-hello", func(w http.ResponseWriter, r *http.Request) { hello.serve(w, r, "") })
	for _, p := range []string{"/console", "/console/{$}", "/console/{file}", "/console-hello/{$}", "/console-hello"} {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			writeProblem(w, notAllowed(r.Method, r.URL.Path, "GET, HEAD"))
		})
	}
}
