package console

import (
	"embed"
	"io/fs"
)

// BudgetGzipBytes is the console's page-weight budget: the gzipped sizes of
// index.html, app.js and app.css, summed (40 KB).
const BudgetGzipBytes = 40 * 1024

//go:embed assets
var assets embed.FS

//go:embed hello
var hello embed.FS

// Assets returns the console's files (index.html, app.js, app.css) at the
// root of the file system.
func Assets() fs.FS { return sub(assets, "assets") }

// HelloAssets returns a hello-world page (index.html alone), the page-weight
// baseline served the same way as the console.
func HelloAssets() fs.FS { return sub(hello, "hello") }

func sub(f embed.FS, dir string) fs.FS {
	s, err := fs.Sub(f, dir)
	if err != nil { // only for an invalid name, and dir is a constant
		panic("console: " + err.Error())
	}
	return s
}
