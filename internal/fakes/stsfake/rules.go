package stsfake

import (
	"slices"
	"strings"

	"github.com/hookline/hookline/internal/fakes/awsfake"
)

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// checkInput holds AssumeRole's parameters to STS's shapes.
func checkInput(roleARN, name, ext string) error {
	switch {
	case len(roleARN) < 20 || len(roleARN) > 2048:
		return awsfake.Errorf(400, "ValidationError", "1 validation error detected: Value at 'roleArn' failed to satisfy constraint: Member must have length between 20 and 2048")
	case !sessionNameRE.MatchString(name):
		return awsfake.Errorf(400, "ValidationError", "1 validation error detected: Value %q at 'roleSessionName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]* and length 2..64", name)
	case ext != "" && (len(ext) < 2 || len(ext) > MaxExternalIDLength || !externalIDRE.MatchString(ext)):
		return awsfake.Errorf(400, "ValidationError", "1 validation error detected: Value at 'externalId' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@:\\/-]* and length 2..%d", MaxExternalIDLength)
	}
	return nil
}

// checkDuration holds DurationSeconds to 900..3600 for role chaining and
// 900..the role's maximum otherwise.
func checkDuration(dur int, role Role, caller Caller) error {
	most := role.MaxDuration
	if most == 0 {
		most = DefaultMaxDuration
	}
	if caller.Session {
		most = MaxChainedDuration
	}
	if dur < MinDuration || dur > most {
		return awsfake.Errorf(400, "ValidationError", "DurationSeconds %d is not in %d..%d (role chaining: at most 1 hour)", dur, MinDuration, most)
	}
	return nil
}

// trusts reports whether role's trust policy names the caller's role, its
// account's root or its account id.
func trusts(role Role, callerRole string) bool {
	account := ""
	if p := strings.Split(callerRole, ":"); len(p) > 4 {
		account = p[4]
	}
	return slices.ContainsFunc(role.Trusted, func(p string) bool {
		return p == callerRole || account != "" && (p == account || p == "arn:aws:iam::"+account+":root")
	})
}
