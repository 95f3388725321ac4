// Package e2e holds the end-to-end tests: they run against the hookline stack
// deployed into a local cloud by `make deploy-local` (build tag e2e), with
// receivers on 127.0.0.1. `make test` runs them; without a deployed stack
// they fail, they never skip.
package e2e
