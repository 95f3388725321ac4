package boot

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	smithylog "github.com/aws/smithy-go/logging"
	"github.com/stretchr/testify/require"
)

// lambdaEnv is what Lambda sets for a function: region and the role's
// session credentials.
var lambdaEnv = map[string]string{
	"AWS_REGION":            "eu-west-1",
	"AWS_DEFAULT_REGION":    "eu-west-1",
	"AWS_ACCESS_KEY_ID":     "ASIAEXAMPLE",
	"AWS_SECRET_ACCESS_KEY": "s3cr3t-value",
	"AWS_SESSION_TOKEN":     "token",
}

// getenv reads env over base; a value of "" in env unsets the variable.
func getenv(base, env map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return base[k]
	}
}

func TestAWSConfig(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		env          map[string]string
		wantRegion   string
		wantToken    string
		wantEndpoint *string
	}{
		"lambda": {
			wantRegion: "eu-west-1", wantToken: "token",
		},
		"region from AWS_REGION first": {
			env:        map[string]string{"AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "eu-west-1"},
			wantRegion: "us-east-1", wantToken: "token",
		},
		"region from AWS_DEFAULT_REGION without AWS_REGION": {
			env:        map[string]string{"AWS_REGION": "", "AWS_DEFAULT_REGION": "ap-south-1"},
			wantRegion: "ap-south-1", wantToken: "token",
		},
		"no session token: long-lived keys": {
			env:        map[string]string{"AWS_SESSION_TOKEN": ""},
			wantRegion: "eu-west-1",
		},
		"local cloud endpoint": {
			env:        map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:4566"},
			wantRegion: "eu-west-1", wantToken: "token", wantEndpoint: aws.String("http://127.0.0.1:4566"),
		},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := AWSConfig(getenv(lambdaEnv, tc.env))
			require.NoError(t, err)
			require.Equal(t, tc.wantRegion, cfg.Region)
			require.Equal(t, tc.wantEndpoint, cfg.BaseEndpoint)
			require.IsType(t, &aws.CredentialsCache{}, cfg.Credentials)
			creds, err := cfg.Credentials.Retrieve(context.Background())
			require.NoError(t, err)
			require.Equal(t, "ASIAEXAMPLE", creds.AccessKeyID)
			require.Equal(t, "s3cr3t-value", creds.SecretAccessKey)
			require.Equal(t, tc.wantToken, creds.SessionToken)
			require.False(t, creds.CanExpire, "read once, never refreshed")
			require.Nil(t, cfg.Retryer, "the clients' default retryer")
			require.Nil(t, cfg.HTTPClient, "the clients' default HTTP client")
		})
	}
}

func TestAWSConfigRefusesToStartWithout(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		env  map[string]string
		want []string
	}{
		"a region":         {map[string]string{"AWS_REGION": "", "AWS_DEFAULT_REGION": ""}, []string{"AWS_REGION", "AWS_DEFAULT_REGION"}},
		"credentials":      {map[string]string{"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": ""}, []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}},
		"an access key id": {map[string]string{"AWS_ACCESS_KEY_ID": ""}, []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}},
		"a secret key":     {map[string]string{"AWS_SECRET_ACCESS_KEY": ""}, []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := AWSConfig(getenv(lambdaEnv, tc.env))
			require.Error(t, err)
			for _, v := range tc.want {
				require.ErrorContains(t, err, v)
			}
			require.NotContains(t, err.Error(), "s3cr3t-value", "no credential in the message")
		})
	}
}

// TestEveryClientReachesTheEndpoint sends one request with each client the
// functions build from the configuration, as they build them, to a server
// at AWS_ENDPOINT_URL: the local cloud depends on every service going there,
// signed for the region with the session token.
func TestEveryClientReachesTheEndpoint(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []*http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = w.Write([]byte("{}"))
	}))
	defer srv.Close()
	cfg, err := AWSConfig(getenv(lambdaEnv, map[string]string{"AWS_ENDPOINT_URL": srv.URL}))
	require.NoError(t, err)

	ctx := context.Background()
	for service, call := range map[string]func() error{
		"dynamodb": func() error { _, err := dynamodb.NewFromConfig(cfg).ListTables(ctx, nil); return err },
		"sqs":      func() error { _, err := sqs.NewFromConfig(cfg).ListQueues(ctx, nil); return err },
		"secretsmanager": func() error {
			_, err := secretsmanager.NewFromConfig(cfg).ListSecrets(ctx, nil)
			return err
		},
	} {
		t.Run(service, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			require.NoError(t, call())
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, got, 1)
			r := got[0]
			require.Contains(t, r.Header.Get("Authorization"), "Credential=ASIAEXAMPLE/")
			require.Contains(t, r.Header.Get("Authorization"), "/eu-west-1/"+service+"/aws4_request")
			require.Equal(t, "token", r.Header.Get("X-Amz-Security-Token"))
		})
	}
}

func TestSDKLoggerWritesJSON(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := sdkLogger{slog.New(slog.NewJSONHandler(&buf, nil))}
	l.Logf(smithylog.Warn, "failed to close HTTP response body: %v", "EOF")
	l.Logf(smithylog.Debug, "not at INFO")
	var line map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &line), buf.String())
	require.Equal(t, "WARN", line["level"])
	require.Equal(t, "aws sdk: failed to close HTTP response body: EOF", line["msg"])
}

// A Shutdown's work on SIGTERM runs with a context that ends within the
// budget Lambda leaves before SIGKILL.
func TestShutdownWorkIsBounded(t *testing.T) {
	t.Parallel()
	var left time.Duration
	called := false
	Shutdown{OnShutdown: func(ctx context.Context) {
		called = true
		deadline, ok := ctx.Deadline()
		require.True(t, ok, "a deadline")
		left = time.Until(deadline)
	}}.onSIGTERM()
	require.True(t, called)
	require.Positive(t, left)
	require.LessOrEqual(t, left, ShutdownBudget)
	require.Less(t, ShutdownBudget, 500*time.Millisecond, "Lambda's SIGKILL comes 500 ms after SIGTERM with an internal extension")
}
