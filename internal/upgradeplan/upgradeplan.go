// Package upgradeplan reads the upgrade steps of docs/deploying.md: for
// each supported earlier release, the deploys that take a stack of it to
// this version, each changing at most one index of a table (CloudFormation
// creates or deletes one global secondary index per table per update).
// The document is the one source: the template test (infra,
// TestUpgradeStepsOneIndexPerTable) holds each step against
// CloudFormation's rule, and the upgrade test (tooling/cmd/upgrade, the
// first deploy of `make test`) runs exactly these deploys, so the steps
// users follow and the steps tested cannot drift apart.
//
// The block follows the marker line `<!-- upgrade-plan -->` as a fenced
// block:
//
//	from <commit> [-c key=value ...]
//	  deploy [-c key=value ...]     # a comment
//
// "from" names a release and the context its stack was deployed with; each
// "deploy" under it is one deploy of this version with that context. The
// last deploy of every release is this version's defaults (no context).
package upgradeplan

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Marker is the line that precedes the plan's fenced block.
const Marker = "<!-- upgrade-plan -->"

// Context is a deploy's CDK context (-c key=value), nil for the defaults.
type Context map[string]string

// Key is the context as sorted "key=value" joined by commas, "" for none.
func (c Context) Key() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(c)) {
		parts = append(parts, k+"="+c[k])
	}
	return strings.Join(parts, ",")
}

// Args is the context as cdk arguments: -c key=value, sorted by key.
func (c Context) Args() []string {
	var args []string
	for _, k := range slices.Sorted(maps.Keys(c)) {
		args = append(args, "-c", k+"="+c[k])
	}
	return args
}

// Release is a supported earlier release: the commit, the context its
// stack was deployed with, and the deploys of this version that upgrade it.
type Release struct {
	Commit  string
	Context Context
	Steps   []Context
}

// Name is the release's commit and context, e.g. "c4d38bf
// messageLogLegacyIndex=true".
func (r Release) Name() string {
	if k := r.Context.Key(); k != "" {
		return r.Commit + " " + k
	}
	return r.Commit
}

// Parse reads the plan out of a markdown document.
func Parse(doc string) ([]Release, error) {
	i := strings.Index(doc, Marker)
	if i < 0 {
		return nil, fmt.Errorf("no %s block", Marker)
	}
	lines := strings.Split(doc[i+len(Marker):], "\n")
	var out []Release
	fence := 0
	for n, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence++
			if fence == 2 {
				break
			}
			continue
		}
		if fence != 1 {
			continue
		}
		if c := strings.Index(line, "#"); c >= 0 {
			line = line[:c]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		switch {
		case fields[0] == "from" && len(fields) >= 2:
			ctx, err := context(fields[2:])
			if err != nil {
				return nil, fmt.Errorf("plan line %d: %w", n+1, err)
			}
			out = append(out, Release{Commit: fields[1], Context: ctx})
		case fields[0] == "deploy" && len(out) > 0:
			ctx, err := context(fields[1:])
			if err != nil {
				return nil, fmt.Errorf("plan line %d: %w", n+1, err)
			}
			out[len(out)-1].Steps = append(out[len(out)-1].Steps, ctx)
		default:
			return nil, fmt.Errorf("plan line %d: %q is neither `from COMMIT [-c k=v ...]` nor `deploy [-c k=v ...]` under a from", n+1, strings.TrimSpace(line))
		}
	}
	if fence < 2 {
		return nil, fmt.Errorf("the %s block is not a closed fenced block", Marker)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the %s block names no release", Marker)
	}
	for _, r := range out {
		if len(r.Steps) == 0 || len(r.Steps[len(r.Steps)-1]) != 0 {
			return nil, fmt.Errorf("from %s: the last deploy must be this version's defaults (`deploy` with no context)", r.Name())
		}
	}
	return out, nil
}

// context parses -c key=value pairs (a "from" line's commit already
// taken off).
func context(fields []string) (Context, error) {
	var ctx Context
	for len(fields) > 0 {
		if fields[0] != "-c" || len(fields) < 2 || !strings.Contains(fields[1], "=") {
			return nil, fmt.Errorf("want -c key=value, got %q", strings.Join(fields, " "))
		}
		if ctx == nil {
			ctx = Context{}
		}
		k, v, _ := strings.Cut(fields[1], "=")
		ctx[k] = v
		fields = fields[2:]
	}
	return ctx, nil
}

// Action is one deploy of the upgrade test's chain: of an earlier
// release (Release set), after which the test writes data through it, or
// of this version (Release empty).
type Action struct {
	Release string
	Context Context
}

// Chain is the upgrade test's deploys through the releases commits, in
// order (oldest first): the first release deployed with its context, then
// its steps until the stack's context is the one the next release's plan
// starts from, that release deployed so, and so on; then the last
// release's steps. Its last action is this version's defaults.
func Chain(plan []Release, commits ...string) ([]Action, error) {
	find := func(commit, key string) (Release, bool) {
		for _, r := range plan {
			if r.Commit == commit && (key == "*" || r.Context.Key() == key) {
				return r, true
			}
		}
		return Release{}, false
	}
	if len(commits) == 0 {
		return nil, fmt.Errorf("no release to chain")
	}
	cur, ok := find(commits[0], "")
	if !ok {
		return nil, fmt.Errorf("the plan has no `from %s` with the defaults", commits[0])
	}
	out := []Action{{Release: cur.Commit, Context: cur.Context}}
	for _, next := range commits[1:] {
		joined := false
		for i, step := range cur.Steps {
			if r, ok := find(next, step.Key()); ok {
				out = append(out, asActions(cur.Steps[:i+1])...)
				out = append(out, Action{Release: r.Commit, Context: r.Context})
				cur, joined = r, true
				break
			}
		}
		if !joined {
			return nil, fmt.Errorf("no step of %s reaches a context the plan of %s starts from", cur.Name(), next)
		}
	}
	return append(out, asActions(cur.Steps)...), nil
}

func asActions(steps []Context) []Action {
	out := make([]Action, len(steps))
	for i, s := range steps {
		out[i] = Action{Context: s}
	}
	return out
}
