package stsfake

import (
	"encoding/json"
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

// MaxPolicyLength is the most characters AssumeRole's Policy may have.
const MaxPolicyLength = 2048

// statement is one statement of a session policy: its effect, and the
// actions and resources it names ("*" for any).
type statement struct {
	Effect             string
	Actions, Resources []string
}

// oneOrMany is a policy's Action or Resource: a string or a list.
type oneOrMany []string

func (o *oneOrMany) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*o = []string{one}
		return nil
	}
	var many []string
	err := json.Unmarshal(b, &many)
	*o = many
	return err
}

// parsePolicy reads a session policy: nil when none was passed.
func parsePolicy(s string) ([]statement, error) {
	if s == "" {
		return nil, nil
	}
	if len(s) > MaxPolicyLength {
		return nil, awsfake.Errorf(400, "ValidationError", "1 validation error detected: Value at 'policy' failed to satisfy constraint: Member must have length less than or equal to %d", MaxPolicyLength)
	}
	var doc struct {
		Statement []struct {
			Effect   string
			Action   oneOrMany
			Resource oneOrMany
		}
	}
	if err := json.Unmarshal([]byte(s), &doc); err != nil || len(doc.Statement) == 0 {
		return nil, awsfake.Errorf(400, "MalformedPolicyDocument", "The policy is not in the valid JSON format.")
	}
	out := []statement{}
	for _, st := range doc.Statement {
		if st.Effect != "Allow" && st.Effect != "Deny" {
			return nil, awsfake.Errorf(400, "MalformedPolicyDocument", "Invalid effect: %s", st.Effect)
		}
		out = append(out, statement{Effect: st.Effect, Actions: st.Action, Resources: st.Resource})
	}
	return out, nil
}

// policyAllows reports whether a session policy allows action on
// resource: an Allow names both, and no Deny does.
func policyAllows(p []statement, action, resource string) bool {
	allowed := false
	for _, st := range p {
		if !names(st.Actions, action) || !names(st.Resources, resource) {
			continue
		}
		if st.Effect == "Deny" {
			return false
		}
		allowed = true
	}
	return allowed
}

func names(list []string, v string) bool {
	return slices.Contains(list, v) || slices.Contains(list, "*")
}
