package hookline

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/enqueue"
)

// operatorBus is the EventBridge bus on which the operator receives
// hookline's operational events (endpoint.disabled, endpoint.failing,
// endpoint.recovered, endpoint.degraded, delivery.dead), put there by the enqueue function
// with source "hookline" and the event type as detail-type
// (docs/operations.md). The operator routes them with rules of their own.
type operatorBus struct {
	Bus awsevents.EventBus
	// AlarmRule sends them to the alarm topic; nil unless
	// Props.OperatorEventsToAlarms.
	AlarmRule awsevents.Rule
}

// newOperatorBus creates the operator's bus, its physical name left to
// CloudFormation. newPipelineFunctions names it to the enqueue function and
// lets it put events on it (grantPutEvents).
func newOperatorBus(scope constructs.Construct, id string) operatorBus {
	c := constructs.NewConstruct(scope, &id)
	bus := awsevents.NewEventBus(c, jsii.String("Bus"), &awsevents.EventBusProps{
		Description: jsii.String("hookline: operational events (endpoint.disabled, endpoint.failing, endpoint.recovered, endpoint.degraded, delivery.dead)"),
	})
	return operatorBus{Bus: bus}
}

// grantPutEvents lets fn put events on bus, and on no other bus.
func grantPutEvents(fn awslambda.Function, bus awsevents.IEventBus) {
	awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee:      fn,
		Actions:      jsii.Strings("events:PutEvents"),
		ResourceArns: jsii.Strings(*bus.EventBusArn()),
	})
}

// operatorEventPattern matches hookline's operational events on the bus.
func operatorEventPattern() *awsevents.EventPattern {
	return &awsevents.EventPattern{
		Source:     jsii.Strings(enqueue.EventSource),
		DetailType: jsii.Strings(domain.OpEventTypes...),
	}
}

// routeToAlarms, when enabled (Props.OperatorEventsToAlarms),
// adds the opt-in rule sending every operational event on
// the bus to the alarm topic, whose resource policy then lets EventBridge
// publish to it (AWS requires it; the local cloud does not check it), for
// this rule only (aws:SourceArn). CDK's SnsTopic target would grant every
// rule of every account, so the target is set on the resource itself.
func (b *operatorBus) routeToAlarms(enabled bool, topic awssns.Topic) {
	if !enabled {
		return
	}
	rule := awsevents.NewRule(b.Bus, jsii.String("ToAlarmTopic"), &awsevents.RuleProps{
		Description:  jsii.String("hookline: operational events to the alarm topic (opt-in: operatorEventsToAlarms)"),
		EventBus:     b.Bus,
		EventPattern: operatorEventPattern(),
	})
	rule.Node().DefaultChild().(awsevents.CfnRule).SetTargets([]any{
		&awsevents.CfnRule_TargetProperty{Id: jsii.String("AlarmTopic"), Arn: topic.TopicArn()},
	})
	topic.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("OperatorEventsToAlarms"),
		Actions:    jsii.Strings("sns:Publish"),
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("events.amazonaws.com"), nil)},
		Resources:  jsii.Strings(*topic.TopicArn()),
		Conditions: &map[string]any{"ArnEquals": map[string]any{"aws:SourceArn": rule.RuleArn()}},
	}))
	b.AlarmRule = rule
}
