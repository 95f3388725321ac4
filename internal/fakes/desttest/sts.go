package desttest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/stretchr/testify/require"
)

// STS's cases, for Target.Forgives.
const (
	CaseAssumeRole          = "AssumeRoleWithTheExternalIDGivesCredentials"
	CaseRoleMustExist       = "AssumeRoleOfAMissingRoleIsDenied"
	CaseTrustMustNameCaller = "AssumeRoleNotTrustedIsDenied"
	CaseExternalIDMustMatch = "AssumeRoleWithAnotherExternalIDIsDenied"
	CaseChainedDurationMax  = "ChainedDurationAtMost3600"
	CaseDurationMin         = "DurationAtLeast900"
	CaseSessionNameShape    = "SessionName2To64OfWordPlusEqCommaDotAtDash"
	CaseExternalIDShape     = "ExternalID2To1224Characters"
	CaseSessionPolicyShape  = "SessionPolicyAtMost2048AndAPolicy"
)

// STS's answers and limits, from the AssumeRole API Reference.
const (
	stsAccessDenied         = "AccessDenied"
	stsValidationError      = "ValidationError"
	stsMalformedPolicy      = "MalformedPolicyDocument"
	sessionName             = "hookline-delivery"
	maxExternalIDLength     = 1224 // AssumeRole API Reference: ExternalId, 2 to 1224
	maxSessionPolicyLength  = 2048 // AssumeRole API Reference: Policy, at most 2048
	minDuration, maxChained = 900, 3600
	twoHours                = 7200
)

// STSClient is the STS the suite drives; *sts.Client fits.
type STSClient interface {
	AssumeRole(context.Context, *sts.AssumeRoleInput, ...func(*sts.Options)) (*sts.AssumeRoleOutput, error)
}

// STSBundle is what one STS case runs on: a client whose credentials are
// a role session (a Lambda function's are: what it assumes is role
// chaining) and a role of the case's own, trusting the client's account
// and requiring ExternalID (StringEquals sts:ExternalId).
type STSBundle struct {
	Client     STSClient
	RoleARN    string
	ExternalID string
	// UntrustedRoleARN, if set, is a role whose trust policy names neither
	// the caller nor its account; empty skips that case (the local cloud's
	// harness makes no such role).
	UntrustedRoleARN string
}

// RunSTS runs STS's cases on tg, each in parallel on a bundle of its own.
func RunSTS(t *testing.T, tg Target[STSBundle]) {
	run(t, tg, []testCase[STSBundle]{
		{CaseAssumeRole, assumeRole},
		{CaseRoleMustExist, func(c *Check, b *STSBundle) {
			c.Answer("a role that does not exist", stsAccessDenied, answer(assume(b, b.RoleARN+"-missing", &b.ExternalID, minDuration, sessionName)))
		}},
		{CaseTrustMustNameCaller, func(c *Check, b *STSBundle) {
			if b.UntrustedRoleARN == "" {
				c.Skip("the target makes no role that does not trust the caller")
			}
			c.Answer("a role whose trust policy names another account", stsAccessDenied, answer(assume(b, b.UntrustedRoleARN, nil, minDuration, sessionName)))
		}},
		{CaseExternalIDMustMatch, func(c *Check, b *STSBundle) {
			c.Answer("another external id", stsAccessDenied, answer(assume(b, b.RoleARN, aws.String(b.ExternalID+"-other"), minDuration, sessionName)))
			c.Answer("no external id", stsAccessDenied, answer(assume(b, b.RoleARN, nil, minDuration, sessionName)))
		}},
		{CaseChainedDurationMax, func(c *Check, b *STSBundle) {
			c.Answer("3600 s by a role session", Accepted, answer(assume(b, b.RoleARN, &b.ExternalID, maxChained, sessionName)))
			c.Answer("3601 s by a role session", stsValidationError, answer(assume(b, b.RoleARN, &b.ExternalID, maxChained+1, sessionName)))
			c.Answer("7200 s by a role session", stsValidationError, answer(assume(b, b.RoleARN, &b.ExternalID, twoHours, sessionName)))
		}},
		{CaseDurationMin, func(c *Check, b *STSBundle) {
			c.Answer("900 s", Accepted, answer(assume(b, b.RoleARN, &b.ExternalID, minDuration, sessionName)))
			c.Answer("899 s", stsValidationError, answer(assume(b, b.RoleARN, &b.ExternalID, minDuration-1, sessionName)))
		}},
		{CaseSessionNameShape, sessionNameShape},
		{CaseExternalIDShape, func(c *Check, b *STSBundle) {
			c.Answer("an external id of 1 character", stsValidationError, answer(assume(b, b.RoleARN, aws.String("x"), minDuration, sessionName)))
			c.Answer("an external id of 1225 characters", stsValidationError,
				answer(assume(b, b.RoleARN, aws.String(strings.Repeat("e", maxExternalIDLength+1)), minDuration, sessionName)))
		}},
		{CaseSessionPolicyShape, sessionPolicyShape},
	})
}

func assume(b *STSBundle, role string, ext *string, dur int32, name string) (*sts.AssumeRoleOutput, error) {
	return b.Client.AssumeRole(context.Background(), &sts.AssumeRoleInput{RoleArn: &role, ExternalId: ext,
		DurationSeconds: &dur, RoleSessionName: &name})
}

// assumeRole: the sender's path. Credentials that expire after the
// duration asked, and the assumed-role ARN naming the session.
func assumeRole(c *Check, b *STSBundle) {
	asked := time.Now()
	out, err := assume(b, b.RoleARN, &b.ExternalID, minDuration, sessionName)
	c.Answer("the role with its external id", Accepted, Code(err))
	require.NoError(c, err)
	require.NotNil(c, out.Credentials)
	cr := out.Credentials
	require.NotEmpty(c, aws.ToString(cr.AccessKeyId))
	require.NotEmpty(c, aws.ToString(cr.SecretAccessKey))
	require.NotEmpty(c, aws.ToString(cr.SessionToken))
	require.NotNil(c, cr.Expiration)
	require.True(c, cr.Expiration.After(asked), "expires after the call: %s", cr.Expiration)
	require.NotNil(c, out.AssumedRoleUser)
	arn := aws.ToString(out.AssumedRoleUser.Arn)
	require.Contains(c, arn, ":assumed-role/")
	require.True(c, strings.HasSuffix(arn, "/"+sessionName), "the assumed-role ARN names the session: %s", arn)
}

func sessionNameShape(c *Check, b *STSBundle) {
	for _, name := range []string{"s1", "Az09_+=,.@-" + strings.Repeat("s", 53)} {
		c.Answer("session name "+name[:2]+" of "+strconv.Itoa(len(name)), Accepted, answer(assume(b, b.RoleARN, &b.ExternalID, minDuration, name)))
	}
	for label, name := range map[string]string{"of 1 character": "s", "of 65": strings.Repeat("s", 65), "with a space": "a b",
		"with a slash": "hookline-ep/1", "with a colon": "hookline:ep", "with a non-ASCII letter": "hookline-é"} {
		c.Answer("session name "+label, stsValidationError, answer(assume(b, b.RoleARN, &b.ExternalID, minDuration, name)))
	}
}

func sessionPolicyShape(c *Check, b *STSBundle) {
	withPolicy := func(p string) error {
		_, err := b.Client.AssumeRole(context.Background(), &sts.AssumeRoleInput{RoleArn: &b.RoleARN, ExternalId: &b.ExternalID,
			DurationSeconds: aws.Int32(minDuration), RoleSessionName: aws.String(sessionName), Policy: &p})
		return err
	}
	const allow = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sns:Publish","Resource":"*"}]}`
	c.Answer("a session policy", Accepted, Code(withPolicy(allow)))
	long := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sns:Publish","Resource":"` + strings.Repeat("a", maxSessionPolicyLength) + `"}]}`
	c.Answer("a session policy over 2048 characters", stsValidationError, Code(withPolicy(long)))
	c.Answer("a session policy that is not one", stsMalformedPolicy, Code(withPolicy(`not a policy`)))
}
