// Package console holds the console's static files (HTML, CSS and plain
// JavaScript, no build step), embedded in the api function, which serves
// them at /console/ (internal/api). This is a placeholder until the console
// itself lands: the same API, minimal pages.
package console
