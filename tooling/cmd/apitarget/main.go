// Command apitarget prepares the API deployed in the local cloud for a run
// of scripts/schemathesis.sh: it makes a tenant with a key and an endpoint
// (so that listings hold something to check against their schemas), and
// prints, as shell assignments for eval, the API's base URL, that tenant's
// key and the operator key. The keys reach only the local cloud; the
// wrapper keeps them in its environment and never prints them.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/tooling/harness"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "apitarget:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	env, err := harness.Load(ctx)
	if err != nil {
		return err
	}
	_, _, tenant, err := env.Tenant(ctx, "schemathesis", "schemathesis")
	if err != nil {
		return err
	}
	in := map[string]any{"url": "https://hooks.example.com/schemathesis", "description": "schemathesis", "event_types": []string{"order.*"},
		"headers": map[string]string{"X-Run": "schemathesis"}}
	if err := tenant.Do(ctx, "POST", "/v1/endpoints", in, &api.EndpointView{}); err != nil {
		return fmt.Errorf("create an endpoint: %w", err)
	}
	fmt.Printf("HOOKLINE_API_URL=%s\nHOOKLINE_TENANT_KEY=%s\nHOOKLINE_OPERATOR_KEY=%s\n", shellQuote(env.BaseURL), shellQuote(tenant.Key), shellQuote(env.Operator.Key))
	return nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
