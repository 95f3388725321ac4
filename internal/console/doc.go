// Package console holds the web console's static assets: one HTML page,
// its scripts (ES2020 modules: app.js, which imports charts.js, the charts
// drawn as inline SVG with DOM APIs, overview.js, the tenant-wide
// overview, and log.js, the Messages view) and style sheets (app.css,
// charts.css) under assets/, embedded in the binary that serves them (the
// api function, at /console/). There is no framework, no library, no npm
// and no build step: the files are served as written.
//
// # Safety
//
// The page runs under a CSP with no inline script and no inline style
// (default-src 'none'; script-src 'self'; style-src 'self'; connect-src
// 'self'). Everything read from the API is rendered as text (textContent,
// text nodes, or a small allowlist of attributes set with setAttribute);
// nothing is parsed as HTML and no URL from the API is ever put in an href
// or a src. Credentials (an API key, a portal link's token or the operator
// key) live in the page's memory only, never in localStorage,
// sessionStorage or a cookie: a reload signs the user out. A portal link
// carries its token in the URL fragment (#portal=<token>); the page reads it
// on load and removes it from the address bar and history with
// history.replaceState. A 401 from the API ends the session and shows the
// problem's detail in the session message. On signing in, a tenant session
// asks GET /v1/session for its scopes and renders only the buttons they
// allow (a portal link minted without scopes reads and replays: no New
// endpoint, Edit, Enable/Disable, Rotate secret or Send test). The tests of this package hold
// every script to these rules by searching it for the forbidden sinks
// (the SVG namespace's name, which charts.js passes to createElementNS, is
// the one URL allowed: a name, never fetched). Each chart is an SVG with
// role="img", a title and a description (the figures in words, also shown
// as the chart's caption), its counts in data-* attributes.
//
// # API base
//
// The page calls the API on its own origin, under the path before
// "/console/" in its own location: "" on AWS (https://{id}.execute-api...
// /console/) and "/_aws/execute-api/{apiId}" on the local cloud.
//
// # Page weight
//
// The budget is [BudgetGzipBytes] (40 KB) for index.html, app.css, app.js
// and the modules it imports, each gzipped (best compression) as a client
// that accepts gzip would fetch them, summed. TestPageWeight fails above
// it. [HelloAssets] is a hello-world page served the same way, the
// baseline `make bench` compares the console against.
//
// # DOM contract
//
// Views and actions carry stable data-test attributes that the browser
// tests (e2e/console_*) rely on; the list is in I17's contract and in
// index.html. Beyond it: the endpoints list pages with
// endpoints-prev-page / endpoints-next-page and the tenants list with
// tenants-prev-page / tenants-next-page (prev-page / next-page are the
// dead letters'); both replay buttons (replay-selected, replay-all) open
// the same confirmation showing replay-count, and replay-confirm starts the
// job (replay-cancel drops it); the operator's redrive starts at once. A test
// event's delivery id is shown in test-delivery (with test-open to open
// it); the delivery's state is in delivery-state, delivery-refresh reloads
// it; lookup rows are lookup-row (data-id = delivery id); alarms-error holds
// the detail when the alarms cannot be read; secret-dismiss clears a shown
// secret; signout signs out. The cells of words carry endpoint-types,
// endpoint-status, dlq-type, dlq-reason and message-row-type.
//
// Event types (types.js): nav-types opens the catalog (GET
// /v1/event-types) in types; without one, types-none says so. Each type is
// a type panel (data-name, data-validation) with type-description,
// type-validation, type-deprecated when deprecated, type-schema and
// type-example (text in pre), and, for a credential with
// endpoints:write and an endpoint, type-send, which sends the type's
// example as a test event to the endpoint chosen in types-endpoint and
// shows it in type-sent, with type-open to open its delivery.
//
// # Tables keep words whole
//
// A cell of words (a status, a reason, event types: class words) breaks
// between words only, never inside one, and an event type is one unbroken
// token (class whole), a list of them wrapping after its commas: a table
// too narrow for them scrolls inside its .scroll box, and a stacked card
// on a phone scrolls the cell. Held at 1280 and 390 px by e2e
// TestConsoleTablesKeepWordsWhole.
//
// Charts: a row's endpoint-charts-open fills endpoint-charts (data-id =
// endpoint id) with endpoint-charts-24h and endpoint-charts-7d;
// nav-overview opens the overview, whose overview-charts (data-range 24h
// or 7d) follows overview-range-24h and overview-range-7d, with class-bar
// (data-class, data-count) and overview-row (data-id, data-attempts,
// data-failed). In every block of charts, chart-summary is the text
// summary, chart-bar a period's bar (data-start, data-attempts,
// data-delivered, data-failed and a data-<class> for each failure class,
// data-http5xx and so on) and chart-point a period's p95 (data-p95); the
// attempts chart's data-plot-height is the height of a bar of the most
// attempts.
//
// The Messages view (nav-messages, log.js) lists message-row rows (data-id
// = event id; data-delivery = delivery id when the list is of deliveries,
// under an endpoint, state or status filter), each with message-state
// badges (data-state) and a message-open button; its filters are
// messages-type, messages-endpoint, messages-state, messages-status (a
// status or a class), messages-since, messages-until and messages-apply; it
// pages with messages-prev-page / messages-next-page. An opened event is
// message-event, with message-type, message-payload and its
// message-delivery rows (message-delivery-open opens the delivery).
package console
