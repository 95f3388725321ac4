package verify_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/hookline/hookline/verify"
)

// A receiver's handler: verify, then act on the body. The secret is the
// endpoint's "whsec_..." secret from hookline; during a rotation pass both
// the old and the new one.
func Example() {
	v, err := verify.New("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		panic(err)
	}
	// Only so this example's fixed request stays fresh; leave Now nil.
	v.Now = func() time.Time { return time.Unix(1614265330, 0) }

	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := v.VerifyRequest(r)
		switch {
		case errors.Is(err, verify.ErrBodyTooLarge):
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		case err != nil:
			http.Error(w, "invalid webhook signature", http.StatusUnauthorized)
			return
		}
		// Deduplicate on webhook-id: delivery is at least once.
		fmt.Printf("%s: %s\n", r.Header.Get(verify.HeaderID), body)
		w.WriteHeader(http.StatusNoContent)
	})

	for _, body := range []string{`{"test": 2432232314}`, `{"test": 1}`} {
		req := httptest.NewRequest(http.MethodPost, "/webhook", strings.NewReader(body))
		req.Header.Set("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek")
		req.Header.Set("webhook-timestamp", "1614265330")
		req.Header.Set("webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		fmt.Println(rec.Code)
	}
	// Output:
	// msg_p5jXN8AQM9LWM0D4loKWxJek: {"test": 2432232314}
	// 204
	// 401
}

// Verify checks headers and a body already read, for frameworks that hand
// over both.
func ExampleVerifier_Verify() {
	v, err := verify.New("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		panic(err)
	}
	h := http.Header{}
	h.Set("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek")
	h.Set("webhook-timestamp", "1614265330") // 2021: long past the tolerance
	h.Set("webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
	err = v.Verify(h, []byte(`{"test": 2432232314}`))
	fmt.Println(errors.Is(err, verify.ErrTimestampTooOld))
	// Output: true
}

// An endpoint signed with Ed25519 (v1a): the receiver holds only its
// public key, here read from the tenant's JWKS document.
func ExampleNewFromJWKS() {
	jwks := []byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","use":"sig","alg":"EdDSA",
		"kid":"ep_3jq4a7bqhv2ke4ld.rEltOPXl-8jZfn0NbO5yMzHDi5e-WdjzkrFUUcp6oIE",
		"x":"1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4"}]}`)
	v, err := verify.NewFromJWKS(jwks, "ep_3jq4a7bqhv2ke4ld")
	if err != nil {
		panic(err)
	}
	// Only so this example's fixed request stays fresh; leave Now nil.
	v.Now = func() time.Time { return time.Unix(1614265330, 0) }
	h := http.Header{}
	h.Set("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek")
	h.Set("webhook-timestamp", "1614265330")
	h.Set("webhook-signature", "v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg==")
	fmt.Println(v.Verify(h, []byte(`{"test": 2432232314}`)))
	// Output: <nil>
}
