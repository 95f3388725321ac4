package main

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/stretchr/testify/require"
)

func TestLoadConfig(t *testing.T) {
	env := map[string]string{"HOOKLINE_STATE_TABLE": "state", "HOOKLINE_OPERATOR_KEY_SECRET_ARN": "arn:secret", "HOOKLINE_SECRETS_KEY_ARN": "arn:key"}
	get := func(over map[string]string) func(string) string {
		return func(k string) string {
			if v, ok := over[k]; ok {
				return v
			}
			return env[k]
		}
	}
	c, err := loadConfig(get(nil))
	require.NoError(t, err)
	require.False(t, c.URLs.AllowHTTP, "https only by default")
	require.Empty(t, c.URLs.Guard.Allow)
	require.Equal(t, "arn:key", c.SecretsKeyARN)

	c, err = loadConfig(get(map[string]string{"HOOKLINE_ALLOW_HTTP": "true", "HOOKLINE_ALLOW_CIDRS": "127.0.0.0/8"}))
	require.NoError(t, err)
	require.True(t, c.URLs.AllowHTTP)
	require.Len(t, c.URLs.Guard.Allow, 1)

	for name, tc := range map[string]struct {
		over map[string]string
		want string
	}{
		"no table":        {map[string]string{"HOOKLINE_STATE_TABLE": ""}, "HOOKLINE_STATE_TABLE"},
		"no operator key": {map[string]string{"HOOKLINE_OPERATOR_KEY_SECRET_ARN": ""}, "HOOKLINE_OPERATOR_KEY"},
		"no secrets key":  {map[string]string{"HOOKLINE_SECRETS_KEY_ARN": ""}, "HOOKLINE_SECRETS_KEY_ARN is required"},
		"bad allow http":  {map[string]string{"HOOKLINE_ALLOW_HTTP": "sometimes"}, "HOOKLINE_ALLOW_HTTP"},
		"bad cidrs":       {map[string]string{"HOOKLINE_ALLOW_CIDRS": "nope"}, "HOOKLINE_ALLOW_CIDRS"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadConfig(get(tc.over))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

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
