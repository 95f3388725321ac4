// Command sealsecrets encrypts the endpoint signing secrets that endpoints
// written before secrets were sealed still hold in plaintext, under the
// stack's KMS key (stack output SecretsKeyARN), and removes the plaintext.
// It scans the state table, which no function's role may do, so it runs
// with the operator's credentials: `make seal-secrets` (the local cloud),
// or on AWS
//
//	go run ./scripts/sealsecrets -table <StateTableName> -key <SecretsKeyARN>
//
// It is safe to run at any time and more than once; an endpoint rotated
// while it runs is left alone and counted, and a second run seals it. It
// prints counts, never a secret.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/stackoutputs"
	"github.com/hookline/hookline/internal/store"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sealsecrets:", err)
		os.Exit(1)
	}
}

func run() error {
	path := flag.String("outputs", ".local/outputs.json", "cdk --outputs-file, read when -table and -key are not given")
	table := flag.String("table", "", "the state table (stack output StateTableName)")
	key := flag.String("key", "", "the signing secrets' KMS key (stack output SecretsKeyARN)")
	flag.Parse()
	if *table == "" || *key == "" {
		out, err := stackoutputs.Load(*path)
		if err != nil {
			return err
		}
		*table, *key = out.StateTableName, out.SecretsKeyARN
	}
	if *table == "" || *key == "" {
		return fmt.Errorf("no state table or key: pass -table and -key (stack outputs StateTableName, SecretsKeyARN)")
	}
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return err
	}
	sealer := &sealing.Sealer{KMS: kms.NewFromConfig(cfg), KeyID: *key}
	rep, err := store.SealPlaintextSecrets(ctx, dynamodb.NewFromConfig(cfg), *table, func(ctx context.Context, ref store.EndpointRef, plaintext string) (string, error) {
		return sealer.Seal(ctx, sealing.Ref{TenantID: ref.TenantID, EndpointID: ref.EndpointID}, plaintext)
	})
	fmt.Printf("sealsecrets: %d endpoints sealed, %d changed while sealing\n", rep.Sealed, rep.Changed)
	if err != nil {
		return err
	}
	if rep.Changed > 0 {
		return fmt.Errorf("%d endpoints changed while they were sealed: run again", rep.Changed)
	}
	return nil
}
