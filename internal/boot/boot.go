// Package boot is what every hookline function does before it serves: a JSON
// logger at the configured level, the AWS SDK configuration built from the
// variables Lambda sets (region, credentials, and AWS_ENDPOINT_URL for a
// local cloud), and one exit path for a function that cannot start.
//
// The configuration is built by hand rather than by the SDK's
// config.LoadDefaultConfig: that package links the STS, SSO, SSO OIDC and
// sign-in clients, whose package initialisation was most of a function's
// cold start, to support credential sources no Lambda function uses.
package boot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	smithylog "github.com/aws/smithy-go/logging"
	"github.com/hookline/hookline/internal/logging"
)

// Start returns the function's logger and AWS configuration, read from the
// process environment (see AWSConfig); the configuration's Logger writes
// through the function's logger. Nothing is fetched: ctx is not used.
func Start(ctx context.Context, logLevel string) (*slog.Logger, aws.Config, error) {
	log, err := logging.New(os.Stdout, logLevel)
	if err != nil {
		return nil, aws.Config{}, err
	}
	cfg, err := AWSConfig(os.Getenv)
	if err != nil {
		return nil, aws.Config{}, fmt.Errorf("AWS config: %w", err)
	}
	cfg.Logger = sdkLogger{log}
	return log, cfg, nil
}

// AWSConfig builds the SDK configuration of a Lambda function from the
// variables Lambda sets, read with getenv:
//
//   - Region: AWS_REGION, else AWS_DEFAULT_REGION. Required.
//   - Credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (both required)
//     and AWS_SESSION_TOKEN (optional), in an aws.CredentialsCache. They
//     are read once, here: Lambda's do not change during the life of an
//     execution environment.
//   - BaseEndpoint: AWS_ENDPOINT_URL, every service at one URL (a local
//     cloud). Unset: each service's AWS endpoint.
//
// Nothing else is read: no shared config or credentials files, profiles,
// web identity, container or instance credentials, AWS_ENDPOINT_URL_<SERVICE>,
// AWS_MAX_ATTEMPTS or AWS_RETRY_MODE. Every other field is its zero value,
// which the service clients take as the SDK's defaults (standard retryer,
// legacy defaults mode, the SDK's HTTP client); Logger is nil, Start sets it.
func AWSConfig(getenv func(string) string) (aws.Config, error) {
	region := getenv("AWS_REGION")
	if region == "" {
		region = getenv("AWS_DEFAULT_REGION")
	}
	if region == "" {
		return aws.Config{}, errors.New("no region: AWS_REGION (or AWS_DEFAULT_REGION) is not set")
	}
	creds := aws.Credentials{
		AccessKeyID:     getenv("AWS_ACCESS_KEY_ID"),
		SecretAccessKey: getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken:    getenv("AWS_SESSION_TOKEN"),
		Source:          envCredentialsSource,
	}
	if creds.AccessKeyID == "" || creds.SecretAccessKey == "" {
		return aws.Config{}, errors.New("no credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must both be set (Lambda sets them from the function's role)")
	}
	cfg := aws.Config{
		Region:      region,
		Credentials: aws.NewCredentialsCache(envCredentials(creds)),
	}
	if u := getenv("AWS_ENDPOINT_URL"); u != "" {
		cfg.BaseEndpoint = aws.String(u)
	}
	return cfg, nil
}

// envCredentialsSource is the Source of the credentials AWSConfig reads.
const envCredentialsSource = "EnvironmentVariables"

// envCredentials are credentials read from the environment at start.
type envCredentials aws.Credentials

// Retrieve returns the credentials; they never expire.
func (c envCredentials) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials(c), nil
}

// ProviderSources tells the SDK's user agent where the credentials came
// from, as its own environment provider does.
func (envCredentials) ProviderSources() []aws.CredentialSource {
	return []aws.CredentialSource{aws.CredentialSourceEnvVars}
}

// sdkLogger writes the SDK's few log lines (warnings such as a response body
// it failed to close) through the function's JSON logger. Request and
// signing logs stay off: aws.Config.ClientLogMode is zero.
type sdkLogger struct{ log *slog.Logger }

func (l sdkLogger) Logf(class smithylog.Classification, format string, v ...any) {
	level := slog.LevelWarn
	if class == smithylog.Debug {
		level = slog.LevelDebug
	}
	l.log.Log(context.Background(), level, "aws sdk: "+fmt.Sprintf(format, v...))
}

// Env is what Serve needs of a function's environment: its log level.
type Env interface{ Level() string }

// Serve is every function's main: it reads the function's environment with
// load, starts its logger and AWS configuration (Start), has build wire the
// handler once (clients built here are reused by warm invocations), and
// serves it with lambda.Start (a Shutdown: with its shutdown work on
// SIGTERM). A failure before serving is logged and ends the process (Main).
func Serve[C Env](name string, load func(getenv func(string) string) (C, error), build func(cfg C, log *slog.Logger, aws aws.Config) (any, error)) {
	Main(name, func() error {
		cfg, err := load(os.Getenv)
		if err != nil {
			return err
		}
		log, awsCfg, err := Start(context.Background(), cfg.Level())
		if err != nil {
			return err
		}
		handler, err := build(cfg, log, awsCfg)
		if err != nil {
			return err
		}
		if s, ok := handler.(Shutdown); ok {
			lambda.StartWithOptions(s.Handler, lambda.WithEnableSIGTERM(s.onSIGTERM))
			return nil
		}
		lambda.Start(handler)
		return nil
	})
}

// Shutdown is a handler with work to do when Lambda shuts its instance
// down: aws-lambda-go registers an internal extension (no events), which
// makes Lambda send the process SIGTERM, and up to 500 ms later SIGKILL.
// Where the extension cannot register (a local cloud without the
// Extensions API), the instance stops without it.
type Shutdown struct {
	Handler any
	// OnShutdown is called on SIGTERM with a context that ends
	// ShutdownBudget later.
	OnShutdown func(ctx context.Context)
}

// ShutdownBudget bounds Shutdown.OnShutdown: within the 500 ms Lambda
// leaves a function with an internal extension between SIGTERM and
// SIGKILL.
const ShutdownBudget = 400 * time.Millisecond

func (s Shutdown) onSIGTERM() {
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownBudget)
	defer cancel()
	s.OnShutdown(ctx)
}

// Main runs run and, if it fails, logs why the function cannot start and
// exits with status 1: the one exit of a function's main.
func Main(name string, run func() error) {
	if err := run(); err != nil {
		slog.Error(name+" cannot start", "error", err.Error())
		os.Exit(1)
	}
}
