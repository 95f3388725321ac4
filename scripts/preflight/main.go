// Command preflight checks, before `make deploy` runs cdk deploy, that the
// AWS account's Lambda concurrency can hold what the stack reserves. AWS
// refuses reservations that leave an account fewer than 100 unreserved
// concurrent executions, and new accounts can have a limit of 10: a stack
// whose reservations do not fit fails to create, and rolls back.
//
//	go run ./infra reservations -c key=value ... | go run ./scripts/preflight
//
// It reads the app's reservations (the stack's name and what each function
// reserves, for the same context values cdk deploy gets) on stdin, asks
// Lambda for the account's limits (GetAccountSettings) and, when the stack
// exists already, CloudFormation and Lambda for what its functions reserve
// today (they are counted in the account's reserved executions, and will be
// replaced by the new ones). It exits 0 with one line when they fit, 1 with
// one sentence saying what to do when they do not (or it could not tell),
// with your AWS credentials and region.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/smithy-go"
)

// MinUnreserved is the concurrency Lambda keeps unreserved in every
// account: a reservation that would leave less is refused.
const MinUnreserved = 100

// plan is what the app prints: the stack's name and its reservations, by
// function.
type plan struct {
	Stack        string         `json:"stack"`
	Reservations map[string]int `json:"reservations"`
}

// account is what decide needs of the account: its concurrency limit
// (ConcurrentExecutions), its unreserved executions
// (UnreservedConcurrentExecutions), and what the stack's functions reserve
// today (0 when it does not exist yet).
type account struct {
	Limit, Unreserved, Held int
}

// decide reports whether the reservations of p fit the account a, or says
// in one sentence what to do.
func decide(a account, p plan) error {
	need := 0
	for _, n := range p.Reservations {
		need += n
	}
	if need == 0 {
		return nil
	}
	if a.Limit-MinUnreserved < need {
		return fmt.Errorf("hookline reserves %d concurrent Lambda executions (%s) and Lambda keeps %d unreserved, but this account's limit is %d: request a Lambda \"Concurrent executions\" quota increase to at least %d (Service Quotas), or deploy with the small-account profile, make deploy CDK_ARGS=\"-c smallAccount=true\"",
			need, describe(p.Reservations), MinUnreserved, a.Limit, need+MinUnreserved)
	}
	// What other functions of the account reserve stays reserved; the
	// stack's own reservations are replaced by the new ones.
	others := a.Limit - a.Unreserved - a.Held
	if a.Limit-others-MinUnreserved < need {
		return fmt.Errorf("hookline reserves %d concurrent Lambda executions (%s), but other functions in this account reserve %d of its limit of %d and Lambda keeps %d unreserved: lower their reservations, request a Lambda \"Concurrent executions\" quota increase to at least %d (Service Quotas), or deploy with make deploy CDK_ARGS=\"-c smallAccount=true\"",
			need, describe(p.Reservations), others, a.Limit, MinUnreserved, others+need+MinUnreserved)
	}
	return nil
}

// describe lists reservations by function name: "api 20, deliver 21".
func describe(r map[string]int) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(r)) {
		parts = append(parts, fmt.Sprintf("%s %d", name, r[name]))
	}
	return strings.Join(parts, ", ")
}

// Settings is the Lambda call that reads the account's limits.
type Settings interface {
	GetAccountSettings(ctx context.Context, in *lambda.GetAccountSettingsInput, opts ...func(*lambda.Options)) (*lambda.GetAccountSettingsOutput, error)
}

// Concurrency is the Lambda call that reads a function's reservation.
type Concurrency interface {
	GetFunctionConcurrency(ctx context.Context, in *lambda.GetFunctionConcurrencyInput, opts ...func(*lambda.Options)) (*lambda.GetFunctionConcurrencyOutput, error)
}

var (
	_ Settings                                   = (*lambda.Client)(nil)
	_ Concurrency                                = (*lambda.Client)(nil)
	_ cloudformation.ListStackResourcesAPIClient = (*cloudformation.Client)(nil)
)

// check reads the account and decides p.
func check(ctx context.Context, settings Settings, stack cloudformation.ListStackResourcesAPIClient, fns Concurrency, p plan) error {
	out, err := settings.GetAccountSettings(ctx, &lambda.GetAccountSettingsInput{})
	if err != nil {
		return fmt.Errorf("read the account's Lambda concurrency (lambda:GetAccountSettings): %w", err)
	}
	if out.AccountLimit == nil {
		return errors.New("read the account's Lambda concurrency: GetAccountSettings returned no AccountLimit")
	}
	held, err := heldBy(ctx, stack, fns, p.Stack)
	if err != nil {
		return err
	}
	return decide(account{
		Limit:      int(out.AccountLimit.ConcurrentExecutions),
		Unreserved: int(aws.ToInt32(out.AccountLimit.UnreservedConcurrentExecutions)),
		Held:       held,
	}, p)
}

// heldBy is what the functions of stack name reserve today: 0 when the
// stack does not exist.
func heldBy(ctx context.Context, stack cloudformation.ListStackResourcesAPIClient, fns Concurrency, name string) (int, error) {
	held := 0
	pages := cloudformation.NewListStackResourcesPaginator(stack, &cloudformation.ListStackResourcesInput{StackName: &name})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if stackMissing(err) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("list the resources of stack %s (cloudformation:ListStackResources): %w", name, err)
		}
		for _, r := range page.StackResourceSummaries {
			if aws.ToString(r.ResourceType) != "AWS::Lambda::Function" || aws.ToString(r.PhysicalResourceId) == "" {
				continue
			}
			c, err := fns.GetFunctionConcurrency(ctx, &lambda.GetFunctionConcurrencyInput{FunctionName: r.PhysicalResourceId})
			if err != nil {
				return 0, fmt.Errorf("read the reservation of %s (lambda:GetFunctionConcurrency): %w", aws.ToString(r.PhysicalResourceId), err)
			}
			held += int(aws.ToInt32(c.ReservedConcurrentExecutions))
		}
	}
	return held, nil
}

// stackMissing reports whether err is CloudFormation's answer for a stack
// that does not exist (a ValidationError "Stack with id ... does not exist").
func stackMissing(err error) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode() == "ValidationError" && strings.Contains(apiErr.ErrorMessage(), "does not exist")
}

// readPlan reads the app's reservations from r.
func readPlan(r io.Reader) (plan, error) {
	var p plan
	if err := json.NewDecoder(r).Decode(&p); err != nil {
		return p, fmt.Errorf("read the stack's reservations on stdin (from go run ./infra reservations): %w", err)
	}
	if p.Stack == "" {
		return p, errors.New("read the stack's reservations on stdin: no stack name")
	}
	return p, nil
}

func run(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	p, err := readPlan(stdin)
	if err != nil {
		return err
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return fmt.Errorf("load AWS configuration: %w", err)
	}
	fns := lambda.NewFromConfig(cfg)
	if err := check(ctx, fns, cloudformation.NewFromConfig(cfg), fns, p); err != nil {
		return err
	}
	if len(p.Reservations) == 0 {
		fmt.Fprintf(stdout, "preflight: stack %s reserves no Lambda concurrency\n", p.Stack)
	} else {
		fmt.Fprintf(stdout, "preflight: the account's Lambda concurrency holds stack %s's reservations (%s)\n", p.Stack, describe(p.Reservations))
	}
	return nil
}

func main() {
	if err := run(context.Background(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "preflight:", err)
		os.Exit(1)
	}
}
