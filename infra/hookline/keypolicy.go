package hookline

import (
	"fmt"
	"regexp"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/sealing"
)

// The signing secrets' key policy. A key policy that lets the account's
// root principal do kms:* (CDK's default) lets any IAM policy of the
// account grant kms:Decrypt: every admin of the account could open every
// tenant's signing secret. This one names its users itself: the deliver
// role may decrypt, the api role encrypt (both only for the signing-secret
// encryption context), and the key administrators (Props.KeyAdmins, the
// account by default) may manage the key and nothing else. Since the
// account's IAM policies can then grant no cryptographic action on the key,
// the functions' own grants (grantSecrets) are matched by statements here.
//
// The exception, documented in docs/operations.md: an administrator may
// change the key policy itself (kms:PutKeyPolicy), and so could grant
// itself kms:Decrypt; KMS refuses a policy that would lock its creator
// out, so some principal must keep that right. CloudTrail logs every
// PutKeyPolicy.

// keyAdminActions are the key administrators' actions: CDK's list of
// administrative actions (awskms's grantAdmin), with kms:Create* narrowed
// to kms:CreateAlias: kms:CreateGrant, which Create* also matches, would
// let an administrator grant itself kms:Decrypt without touching the
// policy. No action here is cryptographic (Decrypt, Encrypt,
// GenerateDataKey*, ReEncrypt*).
var keyAdminActions = []string{
	"kms:CreateAlias", "kms:Describe*", "kms:Enable*", "kms:List*", "kms:Put*", "kms:Update*",
	"kms:Revoke*", "kms:Disable*", "kms:Get*", "kms:Delete*", "kms:TagResource", "kms:UntagResource",
	"kms:ScheduleKeyDeletion", "kms:CancelKeyDeletion",
}

// keyAdminARN is an IAM principal a key policy may name: an account's root,
// a role or a user (paths allowed).
var keyAdminARN = regexp.MustCompile(`^arn:aws[a-z-]*:iam::\d{12}:(root|role/[\w+=,.@/-]+|user/[\w+=,.@/-]+)$`)

// checkKeyAdmins refuses a KeyAdmins entry that is not an IAM principal's
// ARN.
func checkKeyAdmins(admins []string) error {
	for _, a := range admins {
		if !keyAdminARN.MatchString(a) {
			return fmt.Errorf("key admin %q: want the ARN of an IAM role, user or account root (arn:aws:iam::111122223333:role/NAME)", a)
		}
	}
	return nil
}

// newSecretsKey creates the customer-managed KMS key the endpoints'
// signing secrets are sealed with (package sealing): symmetric, rotated
// yearly by KMS, and retained when the stack is deleted, like the state
// table whose secrets it alone opens (deleting it would make every
// endpoint's secret unreadable). Its policy starts with the administrators'
// statement (admins, or the account when there are none);
// allowSecretsKeyUse adds the functions'.
func newSecretsKey(scope constructs.Construct, id string, admins []string) awskms.Key {
	principals := []awsiam.IPrincipal{awsiam.NewAccountRootPrincipal()}
	if len(admins) > 0 {
		principals = nil
		for _, a := range admins {
			principals = append(principals, awsiam.NewArnPrincipal(jsii.String(a)))
		}
	}
	policy := awsiam.NewPolicyDocument(&awsiam.PolicyDocumentProps{
		Statements: &[]awsiam.PolicyStatement{awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String("KeyAdministration"),
			Principals: &principals,
			Actions:    jsii.Strings(keyAdminActions...),
			Resources:  jsii.Strings("*"),
		})},
	})
	return awskms.NewKey(scope, &id, &awskms.KeyProps{
		Description:       jsii.String("hookline: seals endpoint signing secrets in the state table"),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     dataRemovalPolicy, // kept on delete and replacement, not after a failed first create
		Policy:            policy,
	})
}

// allowSecretsKeyUse adds the functions' statements to the key's policy:
// the deliver role may decrypt and the api role encrypt, each only for
// ciphertexts whose encryption context names the signing-secret purpose
// (as their IAM grants, grantSecrets). No other principal gets a
// cryptographic action.
func allowSecretsKeyUse(key awskms.Key, deliver, api awslambda.Function) {
	use := func(sid string, fn awslambda.Function, action string) {
		key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String(sid),
			Principals: &[]awsiam.IPrincipal{fn.Role()},
			Actions:    jsii.Strings(action),
			Resources:  jsii.Strings("*"),
			Conditions: &map[string]any{
				"StringEquals": map[string]any{"kms:EncryptionContext:" + sealing.ContextPurpose: sealing.Purpose},
			},
		}), jsii.Bool(false))
	}
	use("DeliverDecrypts", deliver, "kms:Decrypt")
	use("ApiEncrypts", api, "kms:Encrypt")
}
