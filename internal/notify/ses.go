package notify

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
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Email is one plain-text e-mail to one address.
type Email struct {
	From, To, Subject, Text string
	// Headers are extra message headers (List-Unsubscribe).
	Headers []Header
	// ConfigurationSet, when set, is the send's SES configuration set.
	ConfigurationSet string
}

// Header is one message header.
type Header struct{ Name, Value string }

// SESClient sends e-mail with SES v2's SendEmail
// (POST /v2/email/outbound-emails), signed with the SDK's SigV4 signer.
// Not the SDK's sesv2 client: linked into a function, its package's
// schemas of every SES operation added 9 MB to the api binary and about a
// third of a hello world's start to its cold start (docs/performance.md,
// issue 38); hookline calls one operation, whose request is the few
// fields below.
type SESClient struct {
	// Config gives the credentials, the region and, when set, the base
	// endpoint (AWS_ENDPOINT_URL: the local cloud).
	Config aws.Config
	// HTTP sends the request. Default: a client with a 10 s timeout.
	HTTP *http.Client
}

// maxErrorBytes bounds the error answer read.
const maxErrorBytes = 4 << 10

// sendEmailRequest is SendEmail's body, the fields hookline sends.
type sendEmailRequest struct {
	FromEmailAddress     string         `json:"FromEmailAddress"`
	Destination          sesDestination `json:"Destination"`
	Content              sesContent     `json:"Content"`
	ConfigurationSetName string         `json:"ConfigurationSetName,omitempty"`
}

type sesDestination struct {
	ToAddresses []string `json:"ToAddresses"`
}

type sesContent struct {
	Simple sesMessage `json:"Simple"`
}

type sesMessage struct {
	Subject sesText     `json:"Subject"`
	Body    sesBody     `json:"Body"`
	Headers []sesHeader `json:"Headers,omitempty"`
}

type sesBody struct {
	Text sesText `json:"Text"`
}

type sesText struct {
	Data    string `json:"Data"`
	Charset string `json:"Charset"`
}

type sesHeader struct {
	Name  string `json:"Name"`
	Value string `json:"Value"`
}

// endpoint is SES v2's address in the config's region: the base endpoint
// when set, else email.<region>.amazonaws.com (.com.cn in China).
func (c *SESClient) endpoint() string {
	if c.Config.BaseEndpoint != nil && *c.Config.BaseEndpoint != "" {
		return strings.TrimRight(*c.Config.BaseEndpoint, "/")
	}
	suffix := "amazonaws.com"
	if strings.HasPrefix(c.Config.Region, "cn-") {
		suffix = "amazonaws.com.cn"
	}
	return "https://email." + c.Config.Region + "." + suffix
}

// Send sends e. Its error says SES's error type and message, never the
// e-mail's text.
func (c *SESClient) Send(ctx context.Context, e Email) error {
	req := sendEmailRequest{
		FromEmailAddress: e.From, Destination: sesDestination{ToAddresses: []string{e.To}},
		Content: sesContent{Simple: sesMessage{
			Subject: sesText{Data: e.Subject, Charset: "UTF-8"}, Body: sesBody{Text: sesText{Data: e.Text, Charset: "UTF-8"}},
		}},
		ConfigurationSetName: e.ConfigurationSet,
	}
	for _, h := range e.Headers {
		req.Content.Simple.Headers = append(req.Content.Simple.Headers, sesHeader(h))
	}
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode SendEmail: %w", err)
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint()+"/v2/email/outbound-emails", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("SendEmail request: %w", err)
	}
	r.Header.Set("Content-Type", "application/json")
	if err := c.sign(ctx, r, body); err != nil {
		return err
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := hc.Do(r)
	if err != nil {
		return fmt.Errorf("SES SendEmail: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBytes))
		return nil
	}
	return sesError(resp)
}

// sign signs r with the config's credentials for SES in its region.
func (c *SESClient) sign(ctx context.Context, r *http.Request, body []byte) error {
	if c.Config.Credentials == nil {
		return errors.New("SES SendEmail: no credentials")
	}
	creds, err := c.Config.Credentials.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("SES SendEmail: credentials: %w", err)
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, r, hex.EncodeToString(sum[:]), "ses", c.Config.Region, time.Now()); err != nil {
		return fmt.Errorf("SES SendEmail: sign: %w", err)
	}
	return nil
}

// sesError is SES's refusal: its error type (the x-amzn-ErrorType header,
// else the body's) and message.
func sesError(resp *http.Response) error {
	var ans struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	_ = json.Unmarshal(b, &ans)
	typ := resp.Header.Get("X-Amzn-Errortype")
	if typ == "" {
		typ = ans.Type
	}
	typ, _, _ = strings.Cut(typ, ":")
	return fmt.Errorf("SES SendEmail: %s (%d): %s", typ, resp.StatusCode, ans.Message)
}
