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
// account by default) may manage the key and encrypt signing secrets (the
// operator's `make seal-secrets`, which seals secrets stored in plaintext
// before sealing existed), and nothing else. Since the account's IAM
// policies can then grant no other cryptographic action on the key, the
// functions' own grants (grantSecrets) are matched by statements here.
//
// The functions' roles are created in the same deploy as the key, seconds
// before it, and KMS refuses a key policy naming a principal it cannot see
// yet (MalformedPolicyDocumentException, which CloudFormation does not
// retry): IAM is eventually consistent. So their statements name the
// account as the principal and the role by an aws:PrincipalArn condition,
// which KMS checks at each request, not at creation. The account principal
// alone would let any IAM policy of the account grant the action; the
// condition keeps it to the one role (whose IAM policy, grantSecrets,
// grants it too). The administrators are named as they are: they exist
// before the stack.
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
// policy. kms:RotateKeyOnDemand rotates the key now, beside KMS's yearly
// rotation (after a suspected exposure). No action here is cryptographic (Decrypt, Encrypt,
// GenerateDataKey*, ReEncrypt*).
var keyAdminActions = []string{
	"kms:CreateAlias", "kms:Describe*", "kms:Enable*", "kms:List*", "kms:Put*", "kms:Update*",
	"kms:Revoke*", "kms:Disable*", "kms:Get*", "kms:Delete*", "kms:TagResource", "kms:UntagResource",
	"kms:ScheduleKeyDeletion", "kms:CancelKeyDeletion", "kms:RotateKeyOnDemand",
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
// statements (admins, or the account when there are none): administration,
// and kms:Encrypt for make seal-secrets; allowSecretsKeyUse adds the
// functions'.
func newSecretsKey(scope constructs.Construct, id string, admins []string) awskms.Key {
	principals := []awsiam.IPrincipal{awsiam.NewAccountRootPrincipal()}
	if len(admins) > 0 {
		principals = nil
		for _, a := range admins {
			principals = append(principals, awsiam.NewArnPrincipal(jsii.String(a)))
		}
	}
	policy := awsiam.NewPolicyDocument(&awsiam.PolicyDocumentProps{
		Statements: &[]awsiam.PolicyStatement{
			awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Sid:        jsii.String("KeyAdministration"),
				Principals: &principals,
				Actions:    jsii.Strings(keyAdminActions...),
				Resources:  jsii.Strings("*"),
			}),
			// make seal-secrets (scripts/sealsecrets) runs with an
			// administrator's credentials: it seals, never opens.
			awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Sid:        jsii.String("AdminsSealSecrets"),
				Principals: &principals,
				Actions:    jsii.Strings("kms:Encrypt"),
				Resources:  jsii.Strings("*"),
				Conditions: &map[string]any{"StringEquals": signingSecretContext()},
			}),
		},
	})
	return awskms.NewKey(scope, &id, &awskms.KeyProps{
		Description:       jsii.String("hookline: seals endpoint signing secrets in the state table"),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     dataRemovalPolicy, // kept on delete and replacement, not after a failed first create
		Policy:            policy,
	})
}

// signingSecretContext is the encryption context every cryptographic
// statement of the key requires: the signing-secret purpose.
func signingSecretContext() map[string]any {
	return map[string]any{"kms:EncryptionContext:" + sealing.ContextPurpose: sealing.Purpose}
}

// allowSecretsKeyUse adds the functions' statements to the key's policy:
// the deliver role may decrypt and the api role encrypt, each only for
// ciphertexts whose encryption context names the signing-secret purpose
// (as their IAM grants, grantSecrets). No other principal gets a
// cryptographic action.
func allowSecretsKeyUse(key awskms.Key, deliver, api awslambda.Function) {
	use := func(sid string, fn awslambda.Function, action string) {
		key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid: jsii.String(sid),
			// The account, narrowed to the role by aws:PrincipalArn: see
			// the note at the top of this file.
			Principals: &[]awsiam.IPrincipal{awsiam.NewAccountRootPrincipal()},
			Actions:    jsii.Strings(action),
			Resources:  jsii.Strings("*"),
			Conditions: &map[string]any{
				"StringEquals": signingSecretContext(),
				"ArnEquals":    map[string]any{"aws:PrincipalArn": *fn.Role().RoleArn()},
			},
		}), jsii.Bool(false))
	}
	use("DeliverDecrypts", deliver, "kms:Decrypt")
	use("ApiEncrypts", api, "kms:Encrypt")
}
