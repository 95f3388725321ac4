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

// Do sends in (nil for no body) and decodes a 2xx answer into out (nil to
// ignore it). A 4xx or 5xx answer is returned as *api.Problem.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.BaseURL, "/")+path, body)
	if err != nil {
		return err
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
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode >= 400 {
		p := &api.Problem{Status: resp.StatusCode}
		if json.Unmarshal(raw, p) != nil || p.Detail == "" {
			p.Detail = fmt.Sprintf("%s %s answered %d: %.200s", method, path, resp.StatusCode, raw)
		}
		return p
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
		}
	}
	return nil
}
