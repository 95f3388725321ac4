package main

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/apigw"

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
	t.Parallel()
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

// iamCaller takes the identity API Gateway verified, of the API's own
// account, and nothing else.
func TestIAMCaller(t *testing.T) {
	t.Parallel()
	const arn = "arn:aws:iam::111122223333:role/Ops"
	iam := func(account, userARN string) *events.APIGatewayV2HTTPRequestContextAuthorizerDescription {
		return &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
			IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{AccountID: account, UserARN: userARN},
		}
	}
	for name, tc := range map[string]struct {
		authorizer *events.APIGatewayV2HTTPRequestContextAuthorizerDescription
		want       bool
	}{
		"signed by the API's account":     {iam("111122223333", arn), true},
		"signed by another account":       {iam("444455556666", "arn:aws:iam::444455556666:role/Ops"), false},
		"no authorizer (a route not IAM)": {nil, false},
		"a JWT authorizer":                {&events.APIGatewayV2HTTPRequestContextAuthorizerDescription{JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{}}, false},
		"no caller ARN":                   {iam("111122223333", ""), false},
	} {
		t.Run(name, func(t *testing.T) {
			ev := events.APIGatewayV2HTTPRequest{RawPath: "/v1/admin/stats", RequestContext: events.APIGatewayV2HTTPRequestContext{
				AccountID: "111122223333", Authorizer: tc.authorizer,
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/v1/admin/stats", Protocol: "HTTP/1.1"},
			}}
			r, err := apigw.Request(context.Background(), ev)
			require.NoError(t, err)
			got, ok := iamCaller(r)
			require.Equal(t, tc.want, ok)
			if tc.want {
				require.Equal(t, arn, got)
			}
		})
	}
	_, ok := iamCaller(httptest.NewRequest("GET", "/v1/admin/stats", nil))
	require.False(t, ok, "a request that did not come through API Gateway")
}
