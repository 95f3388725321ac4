package domain

import "time"

// The per-tenant bounds of the API's expensive routes (the listings,
// metrics, an event's lookup, JWKS, replays, resends and cancels; package
// api, tenantlimit.go). One tenant's expensive requests hold at most
// rate × budget of the api function's executions at once (Little's law):
// 10 of its 60 reserved by default (half of the 20 it had when these were
// chosen), so most of them stay for every other tenant and the operator.
const (
	// DefaultAPITenantExpensiveRate is the most expensive API requests a
	// second one tenant may make, across every api execution environment.
	// Anchor: Stripe holds its expensive reads (search, files) to 20 a
	// second per account on a fleet; hookline's api function has 20
	// executions in all, so a quarter of that.
	DefaultAPITenantExpensiveRate = 5
	// DefaultAPIExpensiveBudget is the longest an expensive API request
	// may run before it is stopped (503, Retry-After). A listing page, a
	// metrics query or an event's lookup reads a few 1 MB pages at most,
	// tens of milliseconds on DynamoDB: 2 s is far above that.
	DefaultAPIExpensiveBudget = 2 * time.Second
)
