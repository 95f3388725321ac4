package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

// APIFloor is the API's floor: an HTTP API (payload 2.0) deployed beside
// the stack, whose one route, POST /v1/events, is served by the floor
// function in mode "api", which answers 202 {} and does nothing else. It is
// what the local cloud's API Gateway and Lambda serve with none of
// hookline's work.
type APIFloor struct {
	// URL is the route's URL, addressed as the stack's API is.
	URL  string
	undo []func(context.Context) error
}

// DeployAPIFloor creates the API floor, named after name, with the floor
// function's bootstrap binary; Close removes it. The HTTP API is created
// through API Gateway's REST control plane (the SDK's apigatewayv2 client
// is not a dependency of the project), signed with cfg's credentials.
func DeployAPIFloor(ctx context.Context, cfg aws.Config, name, bootstrap string) (_ *APIFloor, err error) {
	zipped, err := zipBootstrap(bootstrap)
	if err != nil {
		return nil, err
	}
	f := &APIFloor{}
	defer func() {
		if err != nil {
			f.Close(context.WithoutCancel(ctx))
		}
	}()
	fn := lambda.NewFromConfig(cfg)
	arch := lambdatypes.ArchitectureX8664
	if runtime.GOARCH == "arm64" {
		arch = lambdatypes.ArchitectureArm64
	}
	fname := name + "-api"
	created, err := fn.CreateFunction(ctx, &lambda.CreateFunctionInput{
		FunctionName: &fname, Runtime: lambdatypes.RuntimeProvidedal2023, Handler: aws.String("bootstrap"),
		Architectures: []lambdatypes.Architecture{arch}, Role: aws.String("arn:aws:iam::000000000000:role/" + name),
		Code: &lambdatypes.FunctionCode{ZipFile: zipped}, MemorySize: aws.Int32(256), Timeout: aws.Int32(15),
		Environment: &lambdatypes.Environment{Variables: map[string]string{"FLOOR_MODE": "api"}},
	})
	if err != nil {
		return nil, fmt.Errorf("API floor function: %w", err)
	}
	f.undo = append(f.undo, func(ctx context.Context) error {
		_, err := fn.DeleteFunction(ctx, &lambda.DeleteFunctionInput{FunctionName: &fname})
		return err
	})
	cp := controlPlane{cfg: cfg, base: strings.TrimSuffix(os.Getenv("AWS_ENDPOINT_URL"), "/")}
	var api struct{ ApiId string }
	if err := cp.call(ctx, "POST", "/v2/apis", map[string]any{"name": name, "protocolType": "HTTP"}, &api); err != nil {
		return nil, fmt.Errorf("API floor API: %w", err)
	}
	f.undo = append(f.undo, func(ctx context.Context) error { return cp.call(ctx, "DELETE", "/v2/apis/"+api.ApiId, nil, nil) })
	var integ struct{ IntegrationId string }
	if err := cp.call(ctx, "POST", "/v2/apis/"+api.ApiId+"/integrations", map[string]any{
		"integrationType": "AWS_PROXY", "integrationUri": aws.ToString(created.FunctionArn), "payloadFormatVersion": "2.0",
	}, &integ); err != nil {
		return nil, fmt.Errorf("API floor integration: %w", err)
	}
	if err := cp.call(ctx, "POST", "/v2/apis/"+api.ApiId+"/routes", map[string]any{
		"routeKey": "POST /v1/events", "target": "integrations/" + integ.IntegrationId,
	}, nil); err != nil {
		return nil, fmt.Errorf("API floor route: %w", err)
	}
	if err := cp.call(ctx, "POST", "/v2/apis/"+api.ApiId+"/stages", map[string]any{"stageName": "$default", "autoDeploy": true}, nil); err != nil {
		return nil, fmt.Errorf("API floor stage: %w", err)
	}
	f.URL = cp.base + "/_aws/execute-api/" + api.ApiId + "/v1/events"
	return f, nil
}

// Close removes what DeployAPIFloor created, newest first.
func (f *APIFloor) Close(ctx context.Context) error {
	var errs []error
	for i := len(f.undo) - 1; i >= 0; i-- {
		errs = append(errs, f.undo[i](ctx))
	}
	return errors.Join(errs...)
}

// controlPlane calls API Gateway's REST control plane at base, signed.
type controlPlane struct {
	cfg  aws.Config
	base string
}

func (c controlPlane) call(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	creds, err := c.cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "apigateway", c.cfg.Region, time.Now()); err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// RequestsResult is how long n requests took at a concurrency.
type RequestsResult struct {
	N           int
	Concurrency int
	Elapsed     time.Duration
}

// PerSecond is the requests answered per second.
func (r RequestsResult) PerSecond() float64 { return float64(r.N) / r.Elapsed.Seconds() }

// Requests sends n requests, concurrency at a time, each built by req(i)
// and each expected to answer want; the first other answer is an error.
func Requests(ctx context.Context, client *http.Client, n, concurrency, want int, req func(i int) (*http.Request, error)) (RequestsResult, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, concurrency)
	start := time.Now()
	for range concurrency {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if err := one(ctx, client, want, req, i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return RequestsResult{}, err
	}
	return RequestsResult{N: n, Concurrency: concurrency, Elapsed: elapsed}, nil
}

func one(ctx context.Context, client *http.Client, want int, req func(i int) (*http.Request, error), i int) error {
	r, err := req(i)
	if err != nil {
		return err
	}
	resp, err := client.Do(r.WithContext(ctx))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != want {
		return fmt.Errorf("request %d: %d %s", i, resp.StatusCode, raw)
	}
	return nil
}
