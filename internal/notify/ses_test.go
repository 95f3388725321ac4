package notify_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/notify"
)

// SESClient sends SES v2's SendEmail as the SDK would: a POST of the JSON
// request to /v2/email/outbound-emails, signed SigV4 for ses in the
// config's region; an SES refusal is an error naming its type and message.
func TestSESClientSendsASignedSendEmail(t *testing.T) {
	t.Parallel()
	var got struct {
		method, path, auth, date, ctype string
		body                            map[string]any
	}
	refuse := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.method, got.path, got.auth, got.date, got.ctype = r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("X-Amz-Date"), r.Header.Get("Content-Type")
		_ = json.Unmarshal(b, &got.body)
		if refuse {
			w.Header().Set("X-Amzn-ErrorType", "MessageRejected:http://internal.amazon.com/coral/")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"message":"Email address is not verified."}`))
			return
		}
		_, _ = w.Write([]byte(`{"MessageId":"m-1"}`))
	}))
	defer srv.Close()
	c := &notify.SESClient{Config: aws.Config{
		Region: "eu-west-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
	}}
	e := notify.Email{From: "alerts@hookline.example", To: "ops@acme.example", Subject: "s", Text: "t",
		Headers: []notify.Header{{Name: "List-Unsubscribe", Value: "<https://x>"}}, ConfigurationSet: "cs"}
	require.NoError(t, c.Send(context.Background(), e))
	require.Equal(t, "POST", got.method)
	require.Equal(t, "/v2/email/outbound-emails", got.path)
	require.Equal(t, "application/json", got.ctype)
	require.True(t, strings.HasPrefix(got.auth, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"), got.auth)
	require.Contains(t, got.auth, "/eu-west-1/ses/aws4_request")
	require.NotEmpty(t, got.date)
	want := map[string]any{
		"FromEmailAddress": "alerts@hookline.example", "Destination": map[string]any{"ToAddresses": []any{"ops@acme.example"}},
		"ConfigurationSetName": "cs",
		"Content": map[string]any{"Simple": map[string]any{
			"Subject": map[string]any{"Data": "s", "Charset": "UTF-8"},
			"Body":    map[string]any{"Text": map[string]any{"Data": "t", "Charset": "UTF-8"}},
			"Headers": []any{map[string]any{"Name": "List-Unsubscribe", "Value": "<https://x>"}},
		}},
	}
	require.Equal(t, want, got.body)

	refuse = true
	err := c.Send(context.Background(), e)
	require.EqualError(t, err, "SES SendEmail: MessageRejected (400): Email address is not verified.")
}
