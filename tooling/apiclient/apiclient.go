// Package apiclient is a small client of hookline's HTTP API, for the demo,
// the soak harness and operators' scripts.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/hookline/hookline/internal/api"
)

// Client calls the API at BaseURL with Key.
type Client struct {
	// BaseURL is the API's URL: the stack output ApiURL on AWS, or
	// LocalURL(...) on a local cloud.
	BaseURL string
	// Key is a tenant's API key or the operator key.
	Key string
	// HTTP is the client used. Default http.DefaultClient.
	HTTP *http.Client
}

// LocalURL is the API's URL on a local cloud at endpoint (ministack or
// LocalStack), where the API's own host name does not resolve.
func LocalURL(endpoint, apiID string) string {
	return strings.TrimSuffix(endpoint, "/") + "/_aws/execute-api/" + apiID
}

// limitTries is how many times Do sends a request the tenant's limit of
// expensive requests a second refuses (429, X-Hookline-Limit:
// tenant-expensive) before it returns that refusal.
const limitTries = 10

// Do sends in (nil for no body) and decodes a 2xx answer into out (nil to
// ignore it). A 4xx or 5xx answer is returned as *api.Problem. A refusal
// of the tenant's limit of expensive requests a second is sent again
// after its Retry-After (a second), limitTries times at most: the limit
// bounds a tenant's rate, and a script as a person would waits it out.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	for try := 1; ; try++ {
		limited, err := c.do(ctx, method, path, in, out)
		if !limited || try == limitTries {
			return err
		}
		t := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// do is one request of Do; limited reports a refusal of the tenant's limit
// of expensive requests.
func (c *Client) do(ctx context.Context, method, path string, in, out any) (limited bool, _ error) {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return false, err
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.BaseURL, "/")+path, body)
	if err != nil {
		return false, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Key)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return false, fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode >= 400 {
		p := &api.Problem{Status: resp.StatusCode}
		if json.Unmarshal(raw, p) != nil || p.Detail == "" {
			p.Detail = fmt.Sprintf("%s %s answered %d: %.200s", method, path, resp.StatusCode, raw)
		}
		return resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("X-Hookline-Limit") == "tenant-expensive", p
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return false, fmt.Errorf("%s %s: decode answer: %w", method, path, err)
		}
	}
	return false, nil
}
