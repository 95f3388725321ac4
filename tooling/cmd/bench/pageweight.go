package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/hookline/hookline/internal/console"
	"github.com/hookline/hookline/tooling/harness"
)

// weight is the page weight of one page: the gzipped sizes of its files
// (HTML, JS, CSS), each compressed on its own as a browser downloads them.
type weight struct {
	gzipBytes int
	files     []string
	how       string // "served" (fetched from the deployed API) or "embedded"
}

// gzipSize is the size of b compressed with gzip at its best level (as internal/console weighs it), the
// same for the console and its baseline.
func gzipSize(b []byte) int {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // a valid level
	_, _ = zw.Write(b)                                       // a bytes.Buffer does not fail
	_ = zw.Close()
	return buf.Len()
}

// pageFiles lists the files of a page's FS, index.html first.
func pageFiles(fsys fs.FS) ([]string, error) {
	var names []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return err
	})
	sort.Slice(names, func(i, j int) bool {
		if (names[i] == "index.html") != (names[j] == "index.html") {
			return names[i] == "index.html"
		}
		return names[i] < names[j]
	})
	return names, err
}

// embeddedWeight weighs a page from its embedded files.
func embeddedWeight(fsys fs.FS) (weight, error) {
	names, err := pageFiles(fsys)
	if err != nil {
		return weight{}, err
	}
	w := weight{files: names, how: "embedded"}
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return weight{}, err
		}
		w.gzipBytes += gzipSize(b)
	}
	return w, nil
}

// errNotServed says the deployed API does not serve the page (yet).
var errNotServed = errors.New("not served")

// servedWeight fetches each file of a page from base+prefix as the browser
// does (index.html is the prefix itself) and weighs the bodies the API
// answers.
func servedWeight(ctx context.Context, base, prefix string, fsys fs.FS) (weight, error) {
	names, err := pageFiles(fsys)
	if err != nil {
		return weight{}, err
	}
	client := &http.Client{Timeout: 30 * time.Second}
	w := weight{files: names, how: "served"}
	for _, n := range names {
		url := base + prefix
		if n != "index.html" {
			url += n
		}
		req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
		if err != nil {
			return weight{}, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return weight{}, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return weight{}, err
		}
		if resp.StatusCode == http.StatusNotFound {
			return weight{}, fmt.Errorf("GET %s: %w", url, errNotServed)
		}
		if resp.StatusCode != http.StatusOK {
			return weight{}, fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		w.gzipBytes += gzipSize(b)
	}
	return w, nil
}

// pageWeight weighs the console (HTML+JS+CSS, gzip) against the hello-world
// page, both served by the deployed API at /console/ and /console-hello/
// when base is set and the routes answer, else both read from the files
// embedded in the api function; and against console.BudgetGzipBytes.
func pageWeight(ctx context.Context, base string) ([]row, error) {
	var con, hello weight
	var err error
	if base != "" {
		con, err = servedWeight(ctx, base, "/console/", console.Assets())
		if err == nil {
			hello, err = servedWeight(ctx, base, "/console-hello/", console.HelloAssets())
		}
		if err != nil && !errors.Is(err, errNotServed) {
			return nil, err
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v: weighing the files embedded in the api function instead\n", err)
		}
	}
	if base == "" || err != nil {
		if con, err = embeddedWeight(console.Assets()); err != nil {
			return nil, err
		}
		if hello, err = embeddedWeight(console.HelloAssets()); err != nil {
			return nil, err
		}
	}
	budget := console.BudgetGzipBytes
	return []row{
		{"console", fmt.Sprintf("page weight, gzip (%s, %s)", strings.Join(con.files, " + "), con.how), kb(con.gzipBytes),
			kb(hello.gzipBytes) + " hello page", x(float64(con.gzipBytes) / float64(hello.gzipBytes)), "(reported)"},
		{"console", "page weight against its budget (console.BudgetGzipBytes)", kb(con.gzipBytes),
			kb(budget) + " budget", x(float64(con.gzipBytes) / float64(budget)), "≤ 1x"},
	}, nil
}

// consoleWeight is pageWeight as served by the stack in the local cloud
// when cloud is set, else from the embedded files.
func consoleWeight(ctx context.Context, cloud bool) ([]row, error) {
	base := ""
	if cloud {
		e, err := harness.Load(ctx)
		if err != nil {
			return nil, err
		}
		base = e.BaseURL
	}
	return pageWeight(ctx, base)
}

// kb formats a size in KB (1,024 bytes), or in bytes below one KB.
func kb(b int) string {
	if b < 1024 {
		return fmt.Sprintf("%d B", b)
	}
	return fmt.Sprintf("%.1f KB", float64(b)/1024)
}
