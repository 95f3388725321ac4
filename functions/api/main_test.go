package main

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/stretchr/testify/require"
)

// fakeSecrets answers GetSecretValue with out and err and records the secrets asked for.
type fakeSecrets struct {
	out   *secretsmanager.GetSecretValueOutput
	err   error
	asked []string
}

func (f *fakeSecrets) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	f.asked = append(f.asked, aws.ToString(in.SecretId))
	return f.out, f.err
}

func TestSecretString(t *testing.T) {
	const arn = "arn:aws:secretsmanager:us-east-1:000000000000:secret:operator"
	for name, tc := range map[string]struct {
		fake    fakeSecrets
		want    string
		wantErr string
	}{
		"value":    {fake: fakeSecrets{out: &secretsmanager.GetSecretValueOutput{SecretString: aws.String("op-key")}}, want: "op-key"},
		"no value": {fake: fakeSecrets{out: &secretsmanager.GetSecretValueOutput{}}, wantErr: "the secret " + arn + " has no string value"},
		"empty":    {fake: fakeSecrets{out: &secretsmanager.GetSecretValueOutput{SecretString: aws.String("")}}, wantErr: "the secret " + arn + " has no string value"},
		"error":    {fake: fakeSecrets{err: errors.New("AccessDeniedException")}, wantErr: "read the secret " + arn + ": AccessDeniedException"},
	} {
		t.Run(name, func(t *testing.T) {
			get := secretString(&tc.fake, arn)
			require.Empty(t, tc.fake.asked, "nothing is read before the first call")
			got, err := get(context.Background())
			require.Equal(t, []string{arn}, tc.fake.asked)
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
