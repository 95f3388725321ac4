// Command coldstart compares the size and the start time of the hookline
// functions with a hello-world Go Lambda built the same way (issue 8: at
// most 2x in both). It builds them into a temporary directory, starts each
// -runs times against a local stub of the Lambda Runtime API, interleaved,
// and prints a table. See package tooling/perf/coldstart.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hookline/hookline/tooling/perf/coldstart"
)

// target is the limit, in multiples of the hello world.
const target = 2.0

func main() {
	runs := flag.Int("runs", 20, "starts of each binary")
	flag.Parse()
	if err := run(context.Background(), *runs); err != nil {
		fmt.Fprintln(os.Stderr, "coldstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, runs int) error {
	root, err := repoRoot(ctx)
	if err != nil {
		return err
	}
	rows, err := coldstart.Suite(ctx, root, runs)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "function\tsize MB\tsize-x\tstart median ms\tstart-x\t")
	h := rows[0]
	fmt.Fprintf(w, "hello\t%.2f\t%.2f\t%.2f\t%.2f\t\n", mb(h.HelloSizeBytes), 1.0, ms(h.HelloStartMedian), 1.0)
	var over []string
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%.2f\t%.2f\t%.2f\t%.2f\t\n", r.Name, mb(r.SizeBytes), r.SizeX(), ms(r.StartMedian), r.StartX())
		if r.SizeX() > target || r.StartX() > target {
			over = append(over, r.Name)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Printf("%d starts each, interleaved; target: at most %gx hello in both", runs, target)
	if len(over) > 0 {
		fmt.Printf("; over: %s", strings.Join(over, ", "))
	}
	fmt.Println()
	return nil
}

// repoRoot is the directory of the module this command is run in.
func repoRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not in a Go module: run it from the repository")
	}
	return filepath.Dir(gomod), nil
}

func mb(b int64) float64 { return float64(b) / 1e6 }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
