// Package api is hookline's HTTP API: plain net/http handlers behind one
// router, wrapped for API Gateway in functions/api and run as they are in
// tests.
//
// Every tenant route authenticates with "Authorization: Bearer <key>", or
// with a portal link's token (plt_..., minted by the operator for one
// tenant, short-lived, revocable; expired and revoked tokens get a 401 that
// says so). A portal link reads and replays; each write route names the
// scope a link needs for it (Route.Scope: endpoints:write, secrets:rotate,
// events:publish, granted at minting), and a link without it gets 403
// naming the scope; API keys hold every scope, and GET /v1/session tells a
// credential its own. The tenant comes from the key, never from the URL or the body, and every read
// and write is scoped to it, so another tenant's resource answers 404 exactly
// as a missing one does. Operator routes (/v1/admin/...) take the operator
// key only. Errors are application/problem+json with a detail that says what
// to fix and, for invalid input, the fields at fault; malformed input gets a
// 4xx, never a 5xx. Request bodies are capped at 64 KiB, but POST /v1/events's
// at MaxPublishBodyBytes (an outbox payload and room around it).
//
// The console's pages (ConsoleRoutes) are served beside the API from the
// same router: static files with a strict Content-Security-Policy, no
// credential needed to load them.
package api
