package hookline

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fnenv"
)

// E-mail notices (Props.NotifyFrom): tenants name addresses, the api
// function sends each its verification e-mail, and the replay function
// e-mails every operational event to the verified ones (package notify).
// The events come from the operator's bus: a rule sends each, whole, to
// the replay function's operations queue. Without NotifyFrom there is no
// rule, no grant and no variable: nothing is e-mailed, and naming an
// address answers 409.

// mailEnv is the functions' side of p's notices.
func mailEnv(p Props) fnenv.Mail {
	return fnenv.Mail{From: p.NotifyFrom, ConfigurationSet: p.NotifyConfigurationSet}
}

// checkNotify refuses a sender that is not a bare address, or an identity
// that cannot send it.
func (p *Props) checkNotify() error {
	if p.NotifyFrom == "" {
		if p.NotifyIdentity != "" || p.NotifyConfigurationSet != "" {
			return fmt.Errorf("notify identity %q or configuration set %q without notifyFrom: name the sending address", p.NotifyIdentity, p.NotifyConfigurationSet)
		}
		return nil
	}
	if !domain.BareAddress(p.NotifyFrom) {
		return fmt.Errorf("notify from %q: want a bare e-mail address such as alerts@example.com", p.NotifyFrom)
	}
	domainPart := p.NotifyFrom[strings.LastIndexByte(p.NotifyFrom, '@')+1:]
	if p.NotifyIdentity == "" {
		p.NotifyIdentity = domainPart
	}
	if p.NotifyIdentity != p.NotifyFrom && p.NotifyIdentity != domainPart {
		return fmt.Errorf("notify identity %q: SES sends %s as the address itself or its domain %s", p.NotifyIdentity, p.NotifyFrom, domainPart)
	}
	return nil
}

// newNotices routes the operator's bus's operational events to the
// operations queue and lets the api and replay functions send through the
// identity, when p names a sender.
func newNotices(c constructs.Construct, p Props, bus awsevents.IEventBus, ops awssqs.IQueue, senders ...awslambda.Function) awsevents.Rule {
	if p.NotifyFrom == "" {
		return nil
	}
	// CDK's SQS target gives the rule, by its ARN (aws:SourceArn), and no
	// other, sqs:SendMessage on the queue.
	rule := awsevents.NewRule(c, jsii.String("Notices"), &awsevents.RuleProps{
		Description:  jsii.String("hookline: e-mail tenants their operational events (the replay function sends them through SES)."),
		EventBus:     bus,
		EventPattern: operatorEventPattern(),
		Targets:      &[]awsevents.IRuleTarget{awseventstargets.NewSqsQueue(ops, nil)},
	})
	resources := []*string{sesARN("identity/" + p.NotifyIdentity)}
	if p.NotifyConfigurationSet != "" {
		resources = append(resources, sesARN("configuration-set/"+p.NotifyConfigurationSet))
	}
	for _, fn := range senders {
		// From the stack's identity only, as its own address: a function
		// cannot send as another identity, nor as another address of it.
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings("ses:SendEmail"),
			Resources: &resources,
			Conditions: &map[string]any{
				"StringEquals": map[string]any{"ses:FromAddress": p.NotifyFrom},
			},
		}))
	}
	return rule
}

// sesARN is the ARN of an SES resource of the stack's account and region.
func sesARN(resource string) *string {
	return awscdk.Fn_Join(jsii.String(""), &[]*string{
		jsii.String("arn:"), awscdk.Aws_PARTITION(), jsii.String(":ses:"), awscdk.Aws_REGION(), jsii.String(":"), awscdk.Aws_ACCOUNT_ID(),
		jsii.String(":" + resource),
	})
}
