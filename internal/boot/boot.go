// Package boot is what every hookline function does before it serves: a JSON
// logger at the configured level, the AWS SDK configuration (region,
// credentials and any AWS_ENDPOINT_URL from the environment), and one exit
// path for a function that cannot start.
package boot

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/hookline/hookline/internal/logging"
)

// Start returns the function's logger and AWS configuration.
func Start(ctx context.Context, logLevel string) (*slog.Logger, aws.Config, error) {
	log, err := logging.New(os.Stdout, logLevel)
	if err != nil {
		return nil, aws.Config{}, err
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, aws.Config{}, fmt.Errorf("load AWS config: %w", err)
	}
	return log, cfg, nil
}

// Main runs run and, if it fails, logs why the function cannot start and
// exits with status 1: the one exit of a function's main.
func Main(name string, run func() error) {
	if err := run(); err != nil {
		slog.Error(name+" cannot start", "error", err.Error())
		os.Exit(1)
	}
}
