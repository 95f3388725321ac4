package pipeline

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
)

// Usage is what a function's log group says about a time window: its
// invocations (REPORT lines), their total duration, and the bytes of the
// function's own log lines (platform START, END and REPORT lines apart).
type Usage struct {
	Invocations int
	Duration    time.Duration
	OwnLogBytes int
}

// MeanDuration is the mean duration of an invocation.
func (u Usage) MeanDuration() time.Duration {
	if u.Invocations == 0 {
		return 0
	}
	return u.Duration / time.Duration(u.Invocations)
}

var reportDuration = regexp.MustCompile(`^REPORT RequestId: \S+\s+Duration: ([0-9.]+) ms`)

// FunctionUsage reads a function's log group from since on.
func FunctionUsage(ctx context.Context, fn *lambda.Client, logs *cloudwatchlogs.Client, function string, since time.Time) (Usage, error) {
	cfg, err := fn.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: &function})
	if err != nil {
		return Usage{}, err
	}
	group := "/aws/lambda/" + function
	if cfg.LoggingConfig != nil && aws.ToString(cfg.LoggingConfig.LogGroup) != "" {
		group = aws.ToString(cfg.LoggingConfig.LogGroup)
	}
	var u Usage
	p := cloudwatchlogs.NewFilterLogEventsPaginator(logs, &cloudwatchlogs.FilterLogEventsInput{
		LogGroupName: &group, StartTime: aws.Int64(since.UnixMilli()),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return Usage{}, fmt.Errorf("logs of %s: %w", function, err)
		}
		for _, e := range page.Events {
			msg := aws.ToString(e.Message)
			if m := reportDuration.FindStringSubmatch(msg); m != nil {
				ms, _ := strconv.ParseFloat(m[1], 64)
				u.Invocations++
				u.Duration += time.Duration(ms * float64(time.Millisecond))
				continue
			}
			if len(msg) >= 6 && (msg[:6] == "START " || (len(msg) >= 4 && msg[:4] == "END ")) {
				continue
			}
			u.OwnLogBytes += len(msg) + 1
		}
	}
	return u, nil
}
