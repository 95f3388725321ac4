package retry

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Environment variables that carry a Policy from the CDK stack to the deliver
// function, so the stack's maxReceiveCount and the function's schedule come
// from one value.
const (
	EnvSchedule   = "HOOKLINE_RETRY_SCHEDULE"    // e.g. "0s,5s,30s"; unset means DefaultSchedule
	EnvJitter     = "HOOKLINE_RETRY_JITTER"      // fraction, e.g. "0.2"; unset means DefaultJitter
	EnvJitterMode = "HOOKLINE_RETRY_JITTER_MODE" // proportional (default), full or none
	EnvMaxAge     = "HOOKLINE_MAX_AGE"           // Go duration; unset means DefaultMaxAge
	// EnvVisibilityTimeout carries the delivery queue's visibility timeout
	// (Go duration; unset means DefaultVisibilityTimeout), which bounds the
	// longest delay.
	EnvVisibilityTimeout = "HOOKLINE_QUEUE_VISIBILITY_TIMEOUT"
)

var modeNames = map[JitterMode]string{JitterProportional: "proportional", JitterFull: "full", JitterNone: "none"}

// String names the mode as the environment spells it.
func (m JitterMode) String() string {
	if s, ok := modeNames[m]; ok {
		return s
	}
	return "JitterMode(" + strconv.Itoa(int(m)) + ")"
}

// Env renders the policy, defaults filled in, as environment variables that
// FromEnv reads back.
func (p Policy) Env() map[string]string {
	steps := p.schedule()
	parts := make([]string, len(steps))
	for i, d := range steps {
		parts[i] = d.String()
	}
	return map[string]string{
		EnvSchedule:   strings.Join(parts, ","),
		EnvJitter:     strconv.FormatFloat(p.jitter(), 'f', -1, 64),
		EnvJitterMode: p.Mode.String(),
		EnvMaxAge:     p.maxAge().String(),

		EnvVisibilityTimeout: p.visibilityTimeout().String(),
	}
}

// FromEnv reads a policy from environment variables (unset ones keep their
// defaults) and validates it.
func FromEnv(getenv func(string) string) (Policy, error) {
	var p Policy
	if s := getenv(EnvSchedule); s != "" {
		steps, err := ParseSchedule(s)
		if err != nil {
			return p, fmt.Errorf("%s: %w", EnvSchedule, err)
		}
		p.Schedule = steps
	}
	if s := getenv(EnvJitter); s != "" {
		j, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return p, fmt.Errorf("%s: %q is not a number", EnvJitter, s)
		}
		p.Jitter = j
	}
	if s := getenv(EnvJitterMode); s != "" {
		found := false
		for m, name := range modeNames {
			if name == s {
				p.Mode, found = m, true
			}
		}
		if !found {
			return p, fmt.Errorf("%s: %q is not proportional, full or none", EnvJitterMode, s)
		}
	}
	if s := getenv(EnvMaxAge); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return p, fmt.Errorf("%s: %w", EnvMaxAge, err)
		}
		p.MaxAge = d
	}
	if s := getenv(EnvVisibilityTimeout); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return p, fmt.Errorf("%s: %w", EnvVisibilityTimeout, err)
		}
		p.VisibilityTimeout = d
	}
	if err := p.Validate(); err != nil {
		return p, err
	}
	return p, nil
}
