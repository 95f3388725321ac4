package hookline

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/api"
	"github.com/stretchr/testify/require"
)

// operatorRoutes counts the API's operator routes, each throttled on its
// own bucket.
func operatorRoutes() int {
	n := 0
	for _, rt := range api.Routes() {
		if rt.Operator {
			n++
		}
	}
	return n
}

// TestAPICapacityFitsReservation: the stage's throttles' buckets, spent
// at once, and the rates they refill at over one request at the documented
// request duration, fit in the api function's reservation, or the props
// are refused with the reservation they need (a Lambda throttle would be
// API Gateway's 500, where the stage answers 429, in a burst too).
func TestAPICapacityFitsReservation(t *testing.T) {
	p, err := Props{}.withDefaults()
	require.NoError(t, err)
	need, rate := APIAdmittedConcurrency(p)
	wantRate := DefaultAPIPublishRateLimit + 50 + float64(operatorRoutes())*DefaultAPIAdminRateLimit
	require.Equal(t, wantRate, rate, "the stage's rate, the publish route's and each operator route's")
	wantBurst := DefaultAPIBurstLimit + DefaultAPIPublishBurstLimit + operatorRoutes()*DefaultAPIAdminBurstLimit
	require.InDelta(t, float64(wantBurst)+wantRate*DefaultAPIRequestDuration.Seconds(), need, 1e-9)
	require.LessOrEqual(t, need, float64(p.APIReservedConcurrency), "the defaults fit: %.1f executions of %d", need, p.APIReservedConcurrency)
	require.Equal(t, DefaultAPIRequestDuration, p.APIRequestDuration)

	// A burst counts whole: the old defaults' buckets (100, 200 and 4 a
	// route) fit the old reservation at their rates, not at once.
	_, err = Props{APIBurstLimit: 100, APIPublishBurstLimit: 200, APIAdminBurstLimit: 4, APIReservedConcurrency: 20}.withDefaults()
	require.ErrorContains(t, err, "admit bursts of 348")

	// The capacity table's 1,000 events/s published over HTTP.
	busy := Props{APIPublishRateLimit: 1000, APIPublishBurstLimit: 200, APIRateLimit: 50}
	busyRate := 1000 + 50 + float64(operatorRoutes())*DefaultAPIAdminRateLimit
	busyBurst := DefaultAPIBurstLimit + 200 + operatorRoutes()*DefaultAPIAdminBurstLimit
	want := int(math.Ceil(float64(busyBurst) + busyRate*DefaultAPIRequestDuration.Seconds()))
	_, err = busy.withDefaults()
	require.ErrorContains(t, err, fmt.Sprintf("raise apiReservedConcurrency to %d", want))
	require.ErrorContains(t, err, "API Gateway answers 500")
	busy.APIReservedConcurrency = want
	_, err = busy.withDefaults()
	require.NoError(t, err, "the reservation it names is enough")
	busy.APIReservedConcurrency = want - 1
	_, err = busy.withDefaults()
	require.Error(t, err, "one fewer is not")

	// A faster API (measured) fits more in the same reservation.
	fast := Props{APIPublishRateLimit: 300, APIRequestDuration: 20 * time.Millisecond}
	_, err = fast.withDefaults()
	require.NoError(t, err)
	fast.APIRequestDuration = 0
	_, err = fast.withDefaults()
	require.ErrorContains(t, err, "apiRequestDuration")

	// No reservation: no cap to overrun (the account's pool is the limit).
	_, err = Props{APIPublishRateLimit: 5000, APIReservedConcurrency: -1}.withDefaults()
	require.NoError(t, err)
	_, err = Props{SmallAccount: true, APIPublishRateLimit: 5000}.withDefaults()
	require.NoError(t, err)

	for _, d := range []time.Duration{-time.Second, time.Microsecond, 30 * time.Second} {
		_, err = Props{APIRequestDuration: d}.withDefaults()
		require.ErrorContains(t, err, "API request duration", d)
	}
}
