// Command localfix applies the local cloud's workarounds after a deploy:
// it makes sure the redrive policy of the delivery queue, and of the tenant
// lane when the stack has one, points at the DLQ with the maxReceiveCount
// the stack declared, and that of the deferred fan-out queue, when the stack
// has one, at its own dead-letter queue after fanOutMaxReceiveCount. With
// -ses-identity it creates that SES identity, the operator's step on AWS
// (verifying it) done locally, where creating one verifies it: the stack's
// notices (notifyFrom) are sent through it.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	sestypes "github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/stackoutputs"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "localfix:", err)
		os.Exit(1)
	}
}

func run() error {
	path := flag.String("outputs", ".local/outputs.json", "cdk --outputs-file")
	identity := flag.String("ses-identity", "", "create this SES identity (a domain or an address), which the local cloud verifies at once")
	flag.Parse()
	out, err := stackoutputs.Load(*path)
	if err != nil {
		return err
	}
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return err
	}
	if *identity != "" {
		if err := createIdentity(ctx, sesv2.NewFromConfig(cfg), *identity); err != nil {
			return err
		}
	}
	client := sqs.NewFromConfig(cfg)
	// The delivery queues redrive to the DLQ's arrivals (a release from
	// before them: to the DLQ).
	target := cmp.Or(out.DeadLetterArrivalsQueueARN, out.DeadLetterQueueARN)
	for _, url := range out.DeliverQueueURLs() {
		if err := fixRedrive(ctx, client, url, target, out.MaxReceiveCount); err != nil {
			return err
		}
	}
	if out.FanOutQueueURL != "" && out.FanOutDeadLetterQueueARN != "" {
		return fixRedrive(ctx, client, out.FanOutQueueURL, out.FanOutDeadLetterQueueARN, fanOutMaxReceiveCount)
	}
	return nil
}

// fanOutMaxReceiveCount is the deferred fan-out queue's maxReceiveCount,
// as the stack declares it (infra/hookline, fanOutMaxReceiveCount): the
// stack does not output it, being fixed.
const fanOutMaxReceiveCount = 60

// fixRedrive sets the queue's redrive policy to dlqARN after count receives
// unless it is in place.
func fixRedrive(ctx context.Context, client *sqs.Client, url, dlqARN string, count int) error {
	want, _ := json.Marshal(map[string]any{"deadLetterTargetArn": dlqARN, "maxReceiveCount": count})
	attrs, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameRedrivePolicy},
	})
	if err != nil {
		return fmt.Errorf("read redrive policy of %s: %w", url, err)
	}
	if have := attrs.Attributes[string(types.QueueAttributeNameRedrivePolicy)]; have != "" {
		var got struct {
			ARN   string `json:"deadLetterTargetArn"`
			Count any    `json:"maxReceiveCount"`
		}
		if json.Unmarshal([]byte(have), &got) == nil && got.ARN == dlqARN && fmt.Sprint(got.Count) == fmt.Sprint(count) {
			fmt.Println("localfix: redrive policy already in place:", url, have)
			return nil
		}
	}
	if _, err := client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{
		QueueUrl:   aws.String(url),
		Attributes: map[string]string{string(types.QueueAttributeNameRedrivePolicy): string(want)},
	}); err != nil {
		return fmt.Errorf("set redrive policy of %s: %w", url, err)
	}
	fmt.Println("localfix: redrive policy set:", url, string(want))
	return nil
}

// createIdentity creates the SES identity name; one already there is kept.
func createIdentity(ctx context.Context, client *sesv2.Client, name string) error {
	_, err := client.CreateEmailIdentity(ctx, &sesv2.CreateEmailIdentityInput{EmailIdentity: aws.String(name)})
	var exists *sestypes.AlreadyExistsException
	switch {
	case errors.As(err, &exists):
		fmt.Println("localfix: SES identity already there:", name)
	case err != nil:
		return fmt.Errorf("create SES identity %s: %w", name, err)
	default:
		fmt.Println("localfix: SES identity created:", name)
	}
	return nil
}
