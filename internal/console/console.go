package console

import (
	"embed"
	"io/fs"
)

//go:embed assets
var assets embed.FS

//go:embed hello
var hello embed.FS

// Assets are the console's files at the root: index.html, app.js, app.css.
func Assets() fs.FS { return sub(assets, "assets") }

// HelloAssets is a hello-world page (index.html alone) served the same way
// as the console, the baseline of the console's page-weight benchmark.
func HelloAssets() fs.FS { return sub(hello, "hello") }

func sub(f embed.FS, dir string) fs.FS {
	s, err := fs.Sub(f, dir)
	if err != nil { // cannot happen: dir is embedded
		panic(err)
	}
	return s
}
