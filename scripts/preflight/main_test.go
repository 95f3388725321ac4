package main

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"
)

// defaults are the default props' reservations, as `go run ./infra
// reservations` prints them.
var defaults = plan{Stack: "Hookline", Reservations: map[string]int{"deliver": 32, "api": 60, "replay": 8}}

// small is the small-account profile's: none.
var small = plan{Stack: "Hookline", Reservations: map[string]int{}}

// fakeLambda is Lambda as the preflight sees it, holding the rule it
// checks: an account's reservations leave at least MinUnreserved
// executions unreserved. Reserved is what each function of the account
// reserves.
type fakeLambda struct {
	Limit    int32
	Reserved map[string]int32
}

func (f *fakeLambda) GetAccountSettings(_ context.Context, _ *lambda.GetAccountSettingsInput, _ ...func(*lambda.Options)) (*lambda.GetAccountSettingsOutput, error) {
	unreserved := f.Limit
	for _, n := range f.Reserved {
		unreserved -= n
	}
	if unreserved < f.Limit && unreserved < MinUnreserved {
		panic("fake: Lambda never lets reservations leave fewer than 100 unreserved")
	}
	return &lambda.GetAccountSettingsOutput{AccountLimit: &lambdatypes.AccountLimit{
		ConcurrentExecutions: f.Limit, UnreservedConcurrentExecutions: aws.Int32(unreserved),
	}}, nil
}

func (f *fakeLambda) GetFunctionConcurrency(_ context.Context, in *lambda.GetFunctionConcurrencyInput, _ ...func(*lambda.Options)) (*lambda.GetFunctionConcurrencyOutput, error) {
	out := &lambda.GetFunctionConcurrencyOutput{}
	if n, ok := f.Reserved[aws.ToString(in.FunctionName)]; ok {
		out.ReservedConcurrentExecutions = aws.Int32(n)
	}
	return out, nil
}

// fakeStacks is CloudFormation's ListStackResources over stacks by name,
// each a list of Lambda functions' physical names; an unknown stack is
// CloudFormation's ValidationError.
type fakeStacks map[string][]string

func (f fakeStacks) ListStackResources(_ context.Context, in *cloudformation.ListStackResourcesInput, _ ...func(*cloudformation.Options)) (*cloudformation.ListStackResourcesOutput, error) {
	fns, ok := f[aws.ToString(in.StackName)]
	if !ok {
		return nil, &smithy.GenericAPIError{Code: "ValidationError", Message: "Stack with id " + aws.ToString(in.StackName) + " does not exist"}
	}
	out := &cloudformation.ListStackResourcesOutput{StackResourceSummaries: []cfntypes.StackResourceSummary{
		{ResourceType: aws.String("AWS::SQS::Queue"), PhysicalResourceId: aws.String("https://sqs/q")},
	}}
	for _, fn := range fns {
		out.StackResourceSummaries = append(out.StackResourceSummaries, cfntypes.StackResourceSummary{
			ResourceType: aws.String("AWS::Lambda::Function"), PhysicalResourceId: aws.String(fn),
		})
	}
	return out, nil
}

// TestDecide: hookline's reservations fit when the account's limit, less
// what other functions reserve, leaves Lambda its 100 unreserved
// executions; otherwise one sentence says what to do.
func TestDecide(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		account account
		plan    plan
		refused []string // the refusal's sentence holds these; nil: fits
	}{
		{"a new account's limit of 10: the defaults need 200", account{Limit: 10, Unreserved: 10}, defaults,
			[]string{"reserves 100", "limit is 10", "quota increase to at least 200", "-c smallAccount=true"}},
		{"a limit of 199: one short", account{Limit: 199, Unreserved: 199}, defaults, []string{"at least 200"}},
		{"a limit of 200: just fits", account{Limit: 200, Unreserved: 200}, defaults, nil},
		{"an established account's 1,000", account{Limit: 1000, Unreserved: 1000}, defaults, nil},
		{"the small-account profile in a limit of 10", account{Limit: 10, Unreserved: 10}, small, nil},
		{"other functions reserve 900 of 1,000", account{Limit: 1000, Unreserved: 100}, defaults,
			[]string{"other functions in this account reserve 900", "at least 1100", "-c smallAccount=true"}},
		{"an update: the stack's own 100 are replaced, not added", account{Limit: 200, Unreserved: 100, Held: 100}, defaults, nil},
		{"an update raising deliver by one in a full account", account{Limit: 200, Unreserved: 100, Held: 100},
			plan{Stack: "Hookline", Reservations: map[string]int{"deliver": 33, "api": 60, "replay": 8}}, []string{"reserves 101", "at least 201"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := decide(tc.account, tc.plan)
			if tc.refused == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, s := range tc.refused {
				require.Contains(t, err.Error(), s)
			}
			require.Equal(t, 1, strings.Count(err.Error(), ": "), "one sentence, what is wrong, then what to do: %s", err)
		})
	}
}

// TestCheck runs the decision on what the fakes of Lambda and
// CloudFormation answer.
func TestCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("a new account with a limit of 10 refuses the defaults, takes the small-account profile", func(t *testing.T) {
		l := &fakeLambda{Limit: 10}
		err := check(ctx, l, fakeStacks{}, l, defaults)
		require.ErrorContains(t, err, "limit is 10")
		require.NoError(t, check(ctx, l, fakeStacks{}, l, small))
	})
	t.Run("the deployed stack's reservations count as its own", func(t *testing.T) {
		l := &fakeLambda{Limit: 200, Reserved: map[string]int32{"Hookline-Deliver-1": 32, "Hookline-Api-1": 60, "Hookline-Replay-1": 8}}
		stacks := fakeStacks{"Hookline": {"Hookline-Enqueue-1", "Hookline-Deliver-1", "Hookline-Api-1", "Hookline-Replay-1"}}
		require.NoError(t, check(ctx, l, stacks, l, defaults))
		// Another stack's name: those 100 belong to someone else.
		require.ErrorContains(t, check(ctx, l, stacks, l, plan{Stack: "Other", Reservations: defaults.Reservations}), "other functions in this account reserve 100")
	})
	t.Run("another error of CloudFormation stops the deploy", func(t *testing.T) {
		l := &fakeLambda{Limit: 1000}
		err := check(ctx, l, failingStacks{}, l, defaults)
		require.ErrorContains(t, err, "cloudformation:ListStackResources")
	})
}

type failingStacks struct{}

func (failingStacks) ListStackResources(context.Context, *cloudformation.ListStackResourcesInput, ...func(*cloudformation.Options)) (*cloudformation.ListStackResourcesOutput, error) {
	return nil, &smithy.GenericAPIError{Code: "AccessDenied", Message: "not allowed"}
}

func TestReadPlan(t *testing.T) {
	t.Parallel()
	p, err := readPlan(strings.NewReader(`{"stack":"Hookline","reservations":{"api":60,"deliver":32,"replay":8}}` + "\n"))
	require.NoError(t, err)
	require.Equal(t, defaults, p)
	_, err = readPlan(strings.NewReader(""))
	require.ErrorContains(t, err, "go run ./infra reservations")
}
