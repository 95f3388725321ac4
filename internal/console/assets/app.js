// hookline console. Plain ES2020 module, no framework, no build step.
// Rules (held by console_test.go): API data is rendered as text only, never
// parsed as HTML; no URL from data goes into a link or a source; credentials
// live in memory only.
'use strict';

import { endpointCharts } from './charts.js';
import { loadOverview } from './overview.js';
import { messagesView } from './log.js';
import { replayView } from './jobs.js';
import { eventTypesView } from './types.js';

const $ = (id) => document.getElementById(id);

// The API lives on this origin, under the path before /console/.
const BASE = (() => {
  const p = location.pathname;
  const i = p.indexOf('/console/');
  return i >= 0 ? p.slice(0, i) : p.replace(/\/console$/, '');
})();

// The session: never written to any storage. scopes are the writes a
// tenant credential may make (GET /v1/session); null until known.
const session = { cred: null, kind: null, label: '', epoch: 0, scopes: null };

// The scopes whose actions the console offers; a portal link without one
// sees no button for it (the API would answer 403).
const SCOPE_ENDPOINTS = 'endpoints:write';
const SCOPE_SECRETS = 'secrets:rotate';
let polls = [];

// ---------- DOM helpers (text only) ----------

const ATTRS = new Set(['id', 'for', 'type', 'scope', 'role', 'title', 'colspan', 'tabindex', 'aria-label', 'class']);

// el builds an element; children are nodes or strings (made text nodes).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') e.textContent = String(v);
    else if (k === 'disabled' || k === 'checked') e[k] = Boolean(v);
    else if (ATTRS.has(k) || k.startsWith('data-')) e.setAttribute(k, String(v));
    else throw new Error('attribute not allowed: ' + k);
  }
  for (const c of children) {
    if (c !== undefined && c !== null) e.append(c);
  }
  return e;
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}

function show(node, on) {
  node.hidden = !on;
}

const dash = '—';
const txt = (v) => (v === undefined || v === null || v === '' ? dash : String(v));
const time = (s) => (s ? String(s).replace('T', ' ').replace(/\.\d+/, '') : dash);
const pct = (r) => (typeof r === 'number' ? (r * 100).toFixed(1) + '%' : dash);
const ms = (v) => (typeof v === 'number' ? Math.round(v) + ' ms' : dash);

function button(label, test, onClick, extra) {
  const b = el('button', Object.assign({ type: 'button', 'data-test': test, text: label }, extra || {}));
  b.addEventListener('click', () => onClick(b));
  return b;
}

function cell(content, label) {
  // data-label names the column when a table stacks on a phone.
  return el('td', { 'data-label': label }, content);
}

// wordsCell is a cell of words (a status, a reason) that wraps between words
// only, never inside one (app.css, td.words).
function wordsCell(content, label, test) {
  return el('td', { 'data-label': label, 'data-test': test, class: 'words' }, content);
}

// tokens lists strings each kept whole on one line (an event type is never
// broken at a letter), separated by ", " where the list may wrap.
function tokens(list) {
  const box = el('span', { class: 'tokens' });
  list.forEach((s, i) => {
    if (i > 0) box.append(', ');
    box.append(el('span', { class: 'whole', text: String(s) }));
  });
  return box;
}

// ---------- API ----------

class APIError extends Error {
  constructor(status, detail, errors) {
    super(detail);
    this.status = status;
    this.detail = detail;
    this.errors = errors || [];
  }
}

async function api(method, path, body) {
  if (!session.cred) throw new APIError(401, 'not signed in');
  const epoch = session.epoch;
  const opts = {
    method,
    headers: { Authorization: 'Bearer ' + session.cred, Accept: 'application/json' },
    credentials: 'omit',
    cache: 'no-store',
  };
  if (body !== undefined) {
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  let res;
  // A 429 of the tenant's limit of expensive requests a second (a view
  // that loads several listings at once can meet it) is retried after
  // its Retry-After, twice at most; any other answer is the caller's.
  for (let tries = 0; ; tries++) {
    try {
      res = await fetch(BASE + path, opts);
    } catch (e) {
      throw new APIError(0, 'The API could not be reached (' + e.message + ').');
    }
    if (res.status !== 429 || tries === 2 || res.headers.get('X-Hookline-Limit') !== 'tenant-expensive') break;
    const wait = Math.min(Math.max(parseInt(res.headers.get('Retry-After') || '1', 10) || 1, 1), 5);
    await new Promise((ok) => setTimeout(ok, wait * 1000));
    if (session.epoch !== epoch) throw new APIError(401, 'the session ended');
  }
  const raw = await res.text();
  // An answer that comes after the session ended (or changed) is dropped.
  if (session.epoch !== epoch) throw new APIError(401, 'the session ended');
  let data = null;
  if (raw) {
    try {
      data = JSON.parse(raw);
    } catch (_) {
      data = null;
    }
  }
  if (!res.ok) {
    const detail = data && typeof data.detail === 'string' && data.detail
      ? data.detail : 'HTTP ' + res.status + (res.statusText ? ' ' + res.statusText : '');
    const errs = data && Array.isArray(data.errors) ? data.errors : [];
    const err = new APIError(res.status, detail, errs);
    if (res.status === 401) endSession(detail);
    throw err;
  }
  return data;
}

const enc = encodeURIComponent;
const getJSON = (path) => api('GET', path);

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, v);
  }
  const s = q.toString();
  return s ? '?' + s : '';
}

// ---------- errors and busy ----------

function clearError() {
  const box = $('error');
  clear(box);
  show(box, false);
}

function showError(e) {
  if (e instanceof APIError && e.status === 401) return; // the session message says it
  const box = $('error');
  clear(box);
  const detail = e instanceof APIError ? e.detail : String(e && e.message ? e.message : e);
  box.append(el('p', { text: detail }));
  if (e instanceof APIError && e.errors.length) {
    const ul = el('ul');
    for (const fe of e.errors) {
      const field = fe && fe.field ? String(fe.field) + ': ' : '';
      ul.append(el('li', { text: field + (fe && fe.message ? String(fe.message) : '') }));
    }
    box.append(ul);
  }
  show(box, true);
}

// act runs fn with the error box cleared and the button disabled meanwhile.
async function act(btn, fn) {
  clearError();
  if (btn) btn.disabled = true;
  $('busy').textContent = 'Working…';
  try {
    await fn();
  } catch (e) {
    showError(e);
  } finally {
    if (btn) btn.disabled = false;
    $('busy').textContent = '';
  }
}

// ---------- paging ----------

// Pager walks a cursor-paged listing; load(cursor) renders a page and
// answers its next_cursor.
class Pager {
  constructor(prefix, load) {
    this.prev = $(prefix + '-prev');
    this.next = $(prefix + '-next');
    this.info = $(prefix + '-page');
    this.load = load;
    this.busy = false;
    this.stack = [];
    this.cursor = null;
    this.nextCursor = null;
    this.update();
    this.prev.addEventListener('click', () => act(null, () => this.step(-1)));
    this.next.addEventListener('click', () => act(null, () => this.step(1)));
  }

  async first() {
    this.stack = [];
    await this.go(null);
  }

  async reload() {
    await this.go(this.cursor);
  }

  async go(cursor) {
    this.busy = true;
    this.update();
    try {
      const next = await this.load(cursor);
      this.cursor = cursor;
      this.nextCursor = next || null;
    } finally {
      this.busy = false;
      this.update();
    }
  }

  async step(dir) {
    if (this.busy) return;
    if (dir > 0 && this.nextCursor) {
      const here = this.cursor;
      await this.go(this.nextCursor);
      this.stack.push(here);
    } else if (dir < 0 && this.stack.length) {
      await this.go(this.stack[this.stack.length - 1]);
      this.stack.pop();
    }
    this.update();
  }

  update() {
    this.prev.disabled = this.busy || this.stack.length === 0;
    this.next.disabled = this.busy || !this.nextCursor;
    this.info.textContent = 'Page ' + (this.stack.length + 1);
  }
}

// ---------- session ----------

function signIn(cred, kind, label) {
  session.epoch++;
  session.cred = cred;
  session.kind = kind;
  session.label = label;
  session.scopes = null;
  applyScopes();
  show($('session-message'), false);
  clearError();
  $('who').textContent = kind === 'operator' ? 'Operator' : 'Tenant (' + label + ')';
  show($('signout'), true);
  show($('nav'), true);
  for (const a of $('nav').querySelectorAll('a')) show(a, a.dataset.for === kind);
  const want = kind === 'operator' ? '#operator' : '#endpoints';
  if (location.hash === want) route();
  else location.hash = want;
}

function endSession(message) {
  session.epoch++;
  session.cred = null;
  session.kind = null;
  session.label = '';
  session.scopes = null;
  applyScopes();
  for (const p of polls) clearTimeout(p.timer);
  polls = [];
  wipe();
  show($('nav'), false);
  show($('signout'), false);
  $('who').textContent = '';
  const m = $('session-message');
  m.textContent = message;
  show(m, true);
  clearError();
  showView('signin');
}

// may answers whether the session may make the writes of scope.
function may(scope) {
  return session.kind === 'tenant' && session.scopes !== null && session.scopes.has(scope);
}

// whoami learns, once a sign-in, the tenant and the scopes of a tenant
// credential, and offers only what they allow.
async function whoami() {
  if (session.kind !== 'tenant' || session.scopes !== null) return;
  const epoch = session.epoch;
  const s = await api('GET', '/v1/session');
  if (epoch !== session.epoch) return;
  session.scopes = new Set(s && Array.isArray(s.scopes) ? s.scopes : []);
  let what = session.label;
  if (s && s.credential === 'portal_link') {
    what += session.scopes.size ? ': read, replay dead, ' + [...session.scopes].join(', ') : ': read and replay dead only';
  }
  $('who').textContent = 'Tenant ' + txt(s && s.tenant_id) + ' (' + what + ')';
  applyScopes();
}

// applyScopes shows the page's own write controls only when the session may
// use them (the rows' buttons are rendered, or not, by endpointRow).
function applyScopes() {
  const write = may(SCOPE_ENDPOINTS);
  show($('endpoint-create'), write);
  if (!write) {
    show($('notices-form'), false);
    show($('endpoint-form'), false);
    endpoints.editing = null;
  }
}

// wipe removes every tenant's data from the page.
function wipe() {
  for (const id of ['endpoints-body', 'dlq-body', 'endpoint-ids', 'attempts-body', 'headers-body', 'delivery-facts',
    'lookup-results', 'tenants-body', 'alarms', 'job', 'redrive-job', 'payload', 'secret',
    'secret-endpoint', 'test-delivery', 'test-endpoint', 'delivery-id', 'replay-count', 'tenants-note',
    'endpoint-charts', 'overview', 'notices-list', 'types-view']) {
    clear($(id));
  }
  for (const id of ['secret-panel', 'test-panel', 'replay-panel', 'job', 'redrive-job', 'endpoint-form', 'endpoint-charts', 'notices']) {
    show($(id), false);
  }
  for (const f of ['signin', 'dlq-filters', 'lookup-form', 'endpoint-form', 'notices-form']) $(f).reset();
  dlq.selected.clear();
  delivery.id = null;
  messages.wipe();
}

// ---------- views ----------

const VIEWS = ['signin', 'endpoints', 'overview', 'dlq', 'delivery', 'lookup', 'messages', 'message', 'operator', 'replay', 'types'];
const TENANT_VIEWS = new Set(['endpoints', 'overview', 'dlq', 'delivery', 'lookup', 'messages', 'message', 'replay', 'types']);

function showView(name) {
  for (const v of VIEWS) show($('view-' + v), v === name);
  for (const a of $('nav').querySelectorAll('a')) {
    if (a.dataset.view === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function route() {
  if (!session.cred) {
    showView('signin');
    return;
  }
  let name = location.hash.replace(/^#/, '');
  const allowed = session.kind === 'operator' ? name === 'operator' : TENANT_VIEWS.has(name);
  if (!allowed) {
    if (VIEWS.includes(name) || name === '') name = session.kind === 'operator' ? 'operator' : 'endpoints';
    else return; // an in-page anchor such as #main
  }
  if (name === 'delivery' && !delivery.id) name = 'dlq';
  if (name === 'message' && !messages.hasEvent()) name = 'messages';
  clearError();
  showView(name);
  const loaders = {
    endpoints: async () => {
      await endpoints.pager.first();
      await Promise.all([showEgress(), showNotices()]);
    },
    overview: () => loadOverview(getJSON, act, $('overview'), true),
    dlq: () => dlq.pager.first(),
    delivery: () => loadDelivery(),
    lookup: async () => $('lookup-event').focus(),
    messages: () => messages.list(),
    message: () => messages.loadEvent(),
    operator: () => loadOperator(),
    replay: () => replay.load(session.epoch),
    types: () => types.load(),
  };
  act(null, async () => {
    await whoami();
    await loaders[name]();
  });
}

// ---------- endpoints ----------

const endpoints = { editing: null, pager: null, byId: new Map() };

// healthNode shows an endpoint's health as one line a figure.
function healthNode(hv) {
  if (!hv) return 'unavailable';
  const box = el('div', { class: 'health' },
    el('div', { text: 'success ' + pct(hv.success_rate_24h) + ' of ' + txt(hv.attempts_24h) + ' attempts' }),
    el('div', { text: 'p95 ' + ms(hv.p95_latency_ms_24h) }),
    el('div', { class: hv.consecutive_failures ? 'bad' : '', text: txt(hv.consecutive_failures) + ' consecutive failures' }));
  if (hv.last_failure) {
    box.append(el('div', { class: 'sub', text: 'last failure ' + time(hv.last_failure.at) + ': ' + txt(hv.last_failure.error) }));
  }
  const br = hv.breaker;
  if (br && br.state !== 'closed') {
    // Deliveries wait (no attempt spent) while the breaker is open.
    const what = br.state === 'open' ? 'circuit open: deliveries wait, next probe ' + time(br.next_probe_at)
      : 'circuit half open: probing';
    box.append(el('div', { class: 'bad breaker', 'data-test': 'endpoint-breaker', text: what + ' (' + txt(br.failed_probes) + ' failed probes)' }));
  }
  return box;
}

// statusNode says whether an endpoint is enabled and, from its health,
// since when its failure-rate alert has found it degraded.
function statusNode(ep, hv) {
  let s;
  if (!ep.disabled) s = el('span', { class: 'ok', text: 'enabled' });
  else {
    const why = ep.disabled_reason || (hv && hv.disabled_reason) || 'by request';
    const at = hv && hv.disabled_at ? ' at ' + time(hv.disabled_at) : '';
    s = el('span', { class: 'bad', text: 'disabled (' + why + ')' + at });
  }
  if (!hv || !hv.degraded_since) return s;
  return el('div', {}, s, el('div', { class: 'bad', 'data-test': 'endpoint-degraded' },
    'degraded since ', el('span', { class: 'whole', text: time(hv.degraded_since) })));
}

// alertText says an endpoint's failure-rate alert in a few words, "" for
// none.
function alertText(ep) {
  const a = ep.failure_rate_alert;
  return a ? 'alert at ' + a.threshold_percent + '% over ' + a.window_hours + ' h (min ' + a.min_attempts + ' attempts)' : '';
}

async function loadEndpoints(cursor) {
  const page = await api('GET', '/v1/endpoints' + query({ limit: 20, cursor }));
  const body = $('endpoints-body');
  clear(body);
  endpoints.byId.clear();
  const list = Array.isArray(page && page.data) ? page.data : [];
  show($('endpoints-empty'), list.length === 0);
  for (const ep of list) body.append(endpointRow(ep));
  // Health is only in the single-endpoint answer: fetch it per row.
  for (const ep of list) fillHealth(ep.id);
  return page && page.next_cursor;
}

// endpointRow builds a row; fillHealth later updates its cells in place (never
// replacing the row, so a button found a moment ago stays in the page).
function endpointRow(ep) {
  endpoints.byId.set(ep.id, ep);
  const cur = () => endpoints.byId.get(ep.id);
  const health = el('td', { 'data-label': 'Health (24 h)', 'data-test': 'endpoint-health' }, 'loading…');
  const status = wordsCell(statusNode(ep), 'Status', 'endpoint-status');
  const who = el('div', {},
    el('div', { class: 'url', 'data-test': 'endpoint-url-text', text: where(ep) }),
    el('div', { class: 'sub', text: ep.id }),
    ep.description ? el('div', { class: 'sub', text: ep.description }) : null,
    el('div', { class: 'sub', 'data-test': 'endpoint-signatures-text', text: signaturesText(ep) }),
    ep.auth ? el('div', { class: 'sub', 'data-test': 'endpoint-auth-text', text: authText(ep) }) : null,
    ep.failure_rate_alert ? el('div', { class: 'sub', 'data-test': 'endpoint-alert-text', text: alertText(ep) }) : null);
  const types = tokens(Array.isArray(ep.event_types) && ep.event_types.length ? ep.event_types : ['all']);
  // Only the actions the session's scopes allow are rendered.
  const write = may(SCOPE_ENDPOINTS);
  const rotate = may(SCOPE_SECRETS);
  const actions = el('div', { class: 'row-actions' },
    button('Charts', 'endpoint-charts-open', (b) => act(b, () => showCharts(cur()))),
    write ? button('Edit', 'endpoint-edit', () => editEndpoint(cur())) : null,
    write ? button(ep.disabled ? 'Enable' : 'Disable', 'endpoint-toggle', (b) => act(b, () => toggleEndpoint(cur()))) : null,
    rotate ? button('Rotate secret', 'endpoint-rotate', (b) => act(b, () => rotateSecret(cur()))) : null,
    write ? button('Send test', 'endpoint-test', (b) => act(b, () => sendTest(cur()))) : null,
    write || rotate ? null : el('span', { class: 'sub', 'data-test': 'endpoint-read-only', text: 'read only' }));
  return el('tr', { 'data-test': 'endpoint-row', 'data-id': ep.id, 'data-disabled': String(Boolean(ep.disabled)) },
    cell(who, 'Endpoint'), wordsCell(types, 'Event types', 'endpoint-types'), status, health, cell(actions, 'Actions'));
}

// showEgress says where requests come from (GET /v1/egress-ips), under the
// endpoints: the addresses a receiver allowlists with static egress, or
// that it cannot. Text only; an API without the route leaves it hidden.
async function showEgress() {
  const p = $('egress');
  let v;
  try {
    v = await api('GET', '/v1/egress-ips');
  } catch (e) {
    show(p, false);
    return;
  }
  const ips = Array.isArray(v && v.ips) ? v.ips.map(String) : [];
  p.textContent = v && v.static && ips.length
    ? 'Requests come from ' + ips.join(', ') + ' only: allowlist them all, and verify the webhook-signature header as well.'
    : 'Requests come from AWS\'s shared address ranges, which an IP allowlist cannot tell apart: verify the webhook-signature header.';
  show(p, true);
}

// ---------- notices by e-mail ----------

// showNotices lists the tenant's notification addresses (GET
// /v1/notification-emails) under the endpoints, with a Remove button each
// and the form that adds one for a session that may write endpoints. A
// stack without an SES identity answers 409: the panel says it sends no
// e-mail. It answers whether the stack sends e-mail.
async function showNotices() {
  const panel = $('notices');
  const list = $('notices-list');
  let v;
  try {
    v = await api('GET', '/v1/notification-emails');
  } catch (e) {
    clear(list);
    if (e instanceof APIError && e.status === 409) {
      noticesOn(false);
      return false;
    }
    show(panel, false);
    if (e instanceof APIError && e.status === 404) return false; // an API without the route
    throw e;
  }
  clear(list);
  const write = may(SCOPE_ENDPOINTS);
  for (const n of Array.isArray(v && v.data) ? v.data : []) list.append(noticeItem(n, write));
  noticesOn(true);
  return true;
}

// noticesOn shows the panel as the stack's e-mail is: the list and form,
// or the line that says it sends none.
function noticesOn(on) {
  show($('notices-off'), !on);
  show($('notices-list'), on);
  show($('notices-form'), on && may(SCOPE_ENDPOINTS));
  show($('notices'), true);
}

const NOTICE_STATES = {
  pending: 'pending: waiting for its confirmation link',
  verified: 'verified: gets the notices',
  unsubscribed: 'unsubscribed: followed the link that stops them',
};

function noticeItem(n, write) {
  const state = NOTICE_STATES[n.status] || txt(n.status);
  return el('li', { 'data-test': 'notice-row', 'data-id': n.id, 'data-status': n.status },
    el('span', { class: 'url', 'data-test': 'notice-address', text: n.address }),
    el('span', { class: n.status === 'verified' ? 'ok' : 'sub', 'data-test': 'notice-status', text: state }),
    write ? button('Remove', 'notice-remove', (b) => act(b, () => removeNotice(n.id))) : null);
}

// addNotice names the address typed: hookline sends it its confirmation
// link. A 409 of a stack without e-mail is the panel's line, not an error.
async function addNotice() {
  const box = $('notices-address');
  try {
    await api('POST', '/v1/notification-emails', { address: box.value.trim() });
  } catch (e) {
    if (e instanceof APIError && e.status === 409 && !(await showNotices())) return;
    throw e;
  }
  box.value = '';
  await showNotices();
}

async function removeNotice(id) {
  await api('DELETE', '/v1/notification-emails/' + enc(id));
  await showNotices();
}

// showCharts draws an endpoint's last 24 hours and 7 days (charts.js).
async function showCharts(ep) {
  await endpointCharts(getJSON, $('endpoint-charts'), ep.id, where(ep));
  $('endpoint-charts').scrollIntoView({ block: 'nearest' });
}

async function fillHealth(id) {
  let ep;
  try {
    ep = await api('GET', '/v1/endpoints/' + enc(id));
  } catch (_) {
    ep = null;
  }
  for (const tr of $('endpoints-body').querySelectorAll('tr')) {
    if (tr.dataset.id !== id) continue;
    const health = tr.querySelector('[data-test="endpoint-health"]');
    if (!ep) {
      health.textContent = 'unavailable';
      continue;
    }
    endpoints.byId.set(id, ep);
    clear(health);
    health.append(healthNode(ep.health));
    const status = tr.querySelector('[data-test="endpoint-status"]');
    clear(status);
    status.append(statusNode(ep, ep.health));
  }
}

function parseTypes(s) {
  return s.split(/[,\s]+/).map((t) => t.trim()).filter(Boolean);
}

function parseHeaders(s) {
  const out = {};
  for (const line of s.split('\n')) {
    if (!line.trim()) continue;
    const i = line.indexOf(':');
    if (i <= 0) throw new Error('A header line needs "Name: value": ' + line);
    out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}

// signaturesText names an endpoint's signature schemes and its Ed25519
// public keys (whpk_), as text.
function signaturesText(ep) {
  const schemes = Array.isArray(ep.signatures) && ep.signatures.length ? ep.signatures : ['v1'];
  const keys = Array.isArray(ep.public_keys) ? ep.public_keys : [];
  return 'signed ' + schemes.join(' + ') + (keys.length ? ' · public key ' + keys.join(' ') : '');
}

// where names an endpoint's destination: its URL, or its type and target ARN.
function where(ep) {
  return ep.type && ep.type !== 'http' ? ep.type + ' ' + (ep.target || '') : ep.url;
}

// showTypeFields shows the form's fields of the type selected (url and
// headers for http, target and role for the AWS types).
// authText says how hookline authenticates to ep, its secret never (the
// API does not have it): "" for none.
function authText(ep) {
  const a = ep.auth;
  if (!a) return '';
  if (a.type === 'basic') return 'Basic auth as ' + a.username;
  if (a.type === 'oauth2_client_credentials') return 'OAuth 2.0 client ' + a.client_id + ' of ' + a.token_url;
  if (a.type === 'mtls' && a.certificate) {
    return 'mTLS as ' + a.certificate.subject + ', certificate valid until ' + time(a.certificate.not_after) + ' (UTC)';
  }
  return a.type;
}

// showAuthFields shows the fields of the auth kind selected.
function showAuthFields() {
  const kind = $('endpoint-auth').value;
  for (const d of $('endpoint-form').querySelectorAll('[data-auth]')) show(d, d.dataset.auth === kind);
}

// authInput reads the auth fields of the kind selected: the body of PUT
// /v1/endpoints/{id}/auth (and of create's auth); null for none or keep.
function authInput() {
  const kind = $('endpoint-auth').value;
  const v = (id) => $(id).value;
  if (kind === 'basic') return { type: kind, username: v('auth-username').trim(), password: v('auth-password') };
  if (kind === 'oauth2_client_credentials') {
    const a = { type: kind, token_url: v('auth-token-url').trim(), client_id: v('auth-client-id').trim(), client_secret: v('auth-client-secret') };
    if (v('auth-scope').trim()) a.scope = v('auth-scope').trim();
    if (v('auth-audience').trim()) a.audience = v('auth-audience').trim();
    return a;
  }
  if (kind === 'mtls') return { type: kind, certificate: v('auth-certificate'), private_key: v('auth-private-key') };
  return null;
}

// fillAuth sets the auth fields from ep's (its public fields; a secret is
// typed again), with "keep" offered while it has one.
function fillAuth(ep) {
  const a = ep && ep.auth;
  $('endpoint-auth-keep').hidden = !a;
  $('endpoint-auth').value = a ? 'keep' : '';
  for (const id of ['auth-username', 'auth-password', 'auth-token-url', 'auth-client-id', 'auth-client-secret',
    'auth-scope', 'auth-audience', 'auth-certificate', 'auth-private-key']) $(id).value = '';
  if (a) {
    $('auth-username').value = a.username || '';
    $('auth-token-url').value = a.token_url || '';
    $('auth-client-id').value = a.client_id || '';
    $('auth-scope').value = a.scope || '';
    $('auth-audience').value = a.audience || '';
  }
  showAuthFields();
}

// saveAuth applies the form's auth to an endpoint being edited that had
// before (a kind chosen: set or replaced; none: removed; keep: as it is).
async function saveAuth(id, before) {
  const kind = $('endpoint-auth').value;
  if (kind === 'keep') return;
  if (kind) await api('PUT', '/v1/endpoints/' + enc(id) + '/auth', authInput());
  else if (before && before.auth) await api('DELETE', '/v1/endpoints/' + enc(id) + '/auth');
}

function showTypeFields() {
  const aws = $('endpoint-type').value !== 'http';
  for (const d of $('endpoint-form').querySelectorAll('[data-http]')) show(d, !aws);
  for (const d of $('endpoint-form').querySelectorAll('[data-aws]')) show(d, aws);
}

// parseFilter reads the filter box: null when empty, else its JSON (the
// API checks it and names the path of what is wrong).
function parseFilter(s) {
  if (!s.trim()) return null;
  try { return JSON.parse(s); } catch (e) { throw new Error('The filter is not JSON: ' + e.message); }
}

// alertField is the form's failure-rate alert as saveEndpoint sends it,
// before the endpoint edited (null on create): an object when a threshold
// is given (an empty window or minimum at the API's default); undefined
// (left out) without one on create, and on edit when it is unchanged (any
// change of it ends a degraded episode); null when the threshold is
// emptied on an endpoint that had one.
function alertField(before) {
  const whole = (id, what) => {
    const s = $(id).value.trim();
    if (!s) return undefined;
    if (!/^\d+$/.test(s)) throw new Error(what + ' must be a whole number: ' + s);
    return Number(s);
  };
  const was = before && before.failure_rate_alert;
  const a = { threshold_percent: whole('alert-threshold', 'The alert threshold') };
  if (a.threshold_percent === undefined) return was ? null : undefined;
  a.window_hours = whole('alert-window', 'The alert window');
  a.min_attempts = whole('alert-min', 'The alert minimum of attempts');
  if (was && Object.keys(a).every((k) => a[k] === was[k])) return undefined;
  return a;
}

function openForm(ep) {
  endpoints.editing = ep ? ep.id : null;
  $('endpoint-form-h').textContent = ep ? 'Edit endpoint ' + ep.id : 'New endpoint';
  $('endpoint-type').value = ep && ep.type ? ep.type : 'http';
  $('endpoint-type').disabled = Boolean(ep); // fixed at creation
  $('endpoint-target').value = ep && ep.target ? ep.target : '';
  $('endpoint-role').value = ep && ep.role_arn ? ep.role_arn : '';
  showTypeFields();
  $('endpoint-url').value = ep ? ep.url : '';
  $('endpoint-event-types').value = ep && ep.event_types ? ep.event_types.join(', ') : '';
  $('endpoint-description').value = ep && ep.description ? ep.description : '';
  $('endpoint-signatures').value = ep && Array.isArray(ep.signatures) ? ep.signatures.join(',') : 'v1';
  $('endpoint-headers').value = ep && ep.headers
    ? Object.entries(ep.headers).map(([k, v]) => k + ': ' + v).join('\n') : '';
  $('endpoint-retry-schedule').value = ep && ep.retry_schedule ? ep.retry_schedule.join(', ') : '';
  $('endpoint-timeout').value = ep && ep.timeout_seconds ? String(ep.timeout_seconds) : '';
  $('endpoint-filter').value = ep && ep.filter ? JSON.stringify(ep.filter, null, 1) : '';
  const a = ep && ep.failure_rate_alert;
  $('alert-threshold').value = a ? String(a.threshold_percent) : '';
  $('alert-window').value = a ? String(a.window_hours) : '';
  $('alert-min').value = a ? String(a.min_attempts) : '';
  fillAuth(ep);
  show($('endpoint-form'), true);
  $('endpoint-type').focus();
}

function editEndpoint(ep) {
  clearError();
  openForm(ep);
}

// destinationFields are the form's fields of the type selected.
function destinationFields(creating) {
  const type = $('endpoint-type').value;
  if (type === 'http') {
    return { url: $('endpoint-url').value.trim(), headers: parseHeaders($('endpoint-headers').value) };
  }
  const f = { target: $('endpoint-target').value.trim(), role_arn: $('endpoint-role').value.trim() };
  if (creating) f.type = type;
  return f;
}

// retryFields are the form's retry schedule and timeout: each left out
// when empty on create, and on edit an empty one returns to the stack's
// ([] and 0). The API checks them against the stack's limits.
function retryFields(creating) {
  const f = {};
  const whole = (s, what) => {
    if (!/^\d+$/.test(s)) throw new Error(what + ' must be whole seconds: ' + s);
    return Number(s);
  };
  const sched = $('endpoint-retry-schedule').value.trim();
  if (sched || !creating) {
    f.retry_schedule = sched ? sched.split(',').map((s) => whole(s.trim(), 'A retry delay')) : [];
  }
  const timeout = $('endpoint-timeout').value.trim();
  if (timeout || !creating) f.timeout_seconds = timeout ? whole(timeout, 'The timeout') : 0;
  return f;
}

async function saveEndpoint() {
  const types = parseTypes($('endpoint-event-types').value);
  const description = $('endpoint-description').value;
  const dest = Object.assign(destinationFields(!endpoints.editing), retryFields(!endpoints.editing));
  dest.signatures = $('endpoint-signatures').value.split(',');
  const filter = parseFilter($('endpoint-filter').value);
  const http = $('endpoint-type').value === 'http';
  const alerting = alertField(endpoints.editing ? endpoints.byId.get(endpoints.editing) : null);
  if (alerting !== undefined) dest.failure_rate_alert = alerting;
  if (endpoints.editing) {
    await api('PATCH', '/v1/endpoints/' + enc(endpoints.editing),
      Object.assign(dest, { description, event_types: types, filter }));
    if (http) await saveAuth(endpoints.editing, endpoints.byId.get(endpoints.editing));
  } else {
    const body = dest;
    if (types.length) body.event_types = types;
    if (description) body.description = description;
    if (body.headers && !Object.keys(body.headers).length) delete body.headers;
    if (filter) body.filter = filter;
    const auth = http ? authInput() : null;
    if (auth) body.auth = auth;
    const ep = await api('POST', '/v1/endpoints', body);
    showSecret(ep);
  }
  show($('endpoint-form'), false);
  endpoints.editing = null;
  await endpoints.pager.reload();
}

async function toggleEndpoint(ep) {
  await api('POST', '/v1/endpoints/' + enc(ep.id) + (ep.disabled ? '/enable' : '/disable'));
  await endpoints.pager.reload();
}

async function rotateSecret(ep) {
  const res = await api('POST', '/v1/endpoints/' + enc(ep.id) + '/rotate-secret');
  showSecret(res);
}

function showSecret(ep) {
  $('secret-endpoint').textContent = ep.id;
  $('secret').textContent = ep.secret || '';
  $('external-id').textContent = ep.external_id || '';
  show($('external-id-row'), Boolean(ep.external_id));
  $('secret-note').textContent = ep.previous_secret_until
    ? 'The previous secret keeps signing beside it until ' + time(ep.previous_secret_until) + ' (UTC).' : '';
  show($('secret-panel'), true);
  $('secret').focus();
}

async function copySecret() {
  const code = $('secret');
  const note = $('secret-note');
  try {
    await navigator.clipboard.writeText(code.textContent);
    note.textContent = 'Copied to the clipboard.';
  } catch (_) {
    const r = document.createRange();
    r.selectNodeContents(code);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(r);
    note.textContent = 'Selected: press Ctrl+C (⌘C) to copy.';
  }
}

async function sendTest(ep) {
  const res = await api('POST', '/v1/endpoints/' + enc(ep.id) + '/test');
  $('test-endpoint').textContent = ep.id;
  $('test-delivery').textContent = res.delivery_id;
  show($('test-panel'), true);
}

// ---------- dead letters ----------

const dlq = { selected: new Set(), filter: {}, pager: null, pending: null };

function parseTime(s, field) {
  const v = s.trim();
  if (!v) return undefined;
  const d = new Date(v.includes('T') || /[zZ]|[+-]\d\d:?\d\d$/.test(v) ? v : v.replace(' ', 'T'));
  if (Number.isNaN(d.getTime())) throw new Error(field + ': not a time (use RFC 3339, e.g. 2026-01-31T14:00:00Z)');
  return d.toISOString();
}

function readFilter() {
  return {
    endpoint_id: $('filter-endpoint').value.trim() || undefined,
    event_type: $('filter-type').value.trim() || undefined,
    since: parseTime($('filter-since').value, 'Dead since'),
    until: parseTime($('filter-until').value, 'Dead until'),
  };
}

// fillEndpointChoices offers the tenant's endpoints (a first page of them)
// as suggestions for the endpoint filter, once a session.
async function fillEndpointChoices() {
  const list = $('endpoint-ids');
  if (list.dataset.epoch === String(session.epoch)) return;
  list.dataset.epoch = String(session.epoch);
  clear(list);
  const page = await api('GET', '/v1/endpoints' + query({ limit: 100 }));
  for (const ep of (page && page.data) || []) {
    const o = el('option', { text: where(ep) });
    o.value = ep.id;
    list.append(o);
  }
}

async function loadDLQ(cursor) {
  fillEndpointChoices().catch(() => {});
  const page = await api('GET', '/v1/dlq' + query(Object.assign({ limit: 25, cursor }, dlq.filter)));
  const body = $('dlq-body');
  clear(body);
  const list = Array.isArray(page && page.data) ? page.data : [];
  show($('dlq-empty'), list.length === 0);
  list.forEach((d, i) => body.append(dlqRow(d, i)));
  $('dlq-select-page').checked = false;
  updateSelection();
  return page && page.next_cursor;
}

function dlqRow(d, i) {
  const cb = el('input', { type: 'checkbox', id: 'dlq-cb-' + i, 'data-test': 'dlq-select', checked: dlq.selected.has(d.id) });
  cb.addEventListener('change', () => {
    if (cb.checked) dlq.selected.add(d.id);
    else dlq.selected.delete(d.id);
    updateSelection();
  });
  const pick = el('td', { 'data-label': 'Select' }, cb, el('label', { for: 'dlq-cb-' + i, class: 'sr', text: 'Select ' + d.id }));
  const open = button(d.id, 'dlq-open', () => openDelivery(d.id), { class: 'link' });
  const last = txt(d.last_status) + (d.last_error ? ' (' + d.last_error + ')' : '');
  const dead = time(d.dead_at) + (d.replayed_at ? '; replayed ' + time(d.replayed_at) : '');
  return el('tr', { 'data-test': 'dlq-row', 'data-id': d.id },
    pick, cell(open, 'Delivery'), wordsCell(tokens([txt(d.event_type)]), 'Event type', 'dlq-type'), cell(txt(d.endpoint_id), 'Endpoint'),
    wordsCell(txt(d.dead_reason), 'Reason', 'dlq-reason'), cell(txt(d.attempts), 'Attempts'), cell(last, 'Last status'),
    cell(dead, 'Dead at'));
}

function updateSelection() {
  const n = dlq.selected.size;
  const b = $('replay-selected');
  b.textContent = n ? 'Replay selected (' + n + ')' : 'Replay selected';
  b.disabled = n === 0;
}

function selectPage(on) {
  for (const cb of $('dlq-body').querySelectorAll('input[type="checkbox"]')) {
    cb.checked = on;
    const id = cb.closest('tr').dataset.id;
    if (on) dlq.selected.add(id);
    else dlq.selected.delete(id);
  }
  updateSelection();
}

function askReplaySelected() {
  const ids = Array.from(dlq.selected);
  if (ids.length > 1000) throw new Error('At most 1000 deliveries can be replayed by id at once; select fewer.');
  dlq.pending = { delivery_ids: ids };
  $('replay-what').textContent = 'Selected dead deliveries to replay';
  $('replay-count').textContent = String(ids.length);
  $('replay-how').textContent = 'Each keeps its delivery id (the receiver\'s idempotency key) and gets a fresh retry schedule; '
    + 'any that is no longer dead, or whose endpoint is disabled, is skipped with the reason.';
  show($('replay-panel'), true);
  $('replay-confirm').focus();
}

// countMatching pages the listing with the applied filter, up to a cap.
const COUNT_CAP = 2000;

async function countMatching(filter) {
  let n = 0;
  let cursor;
  do {
    const page = await api('GET', '/v1/dlq' + query(Object.assign({ limit: 100, cursor }, filter)));
    n += page && Array.isArray(page.data) ? page.data.length : 0;
    cursor = page && page.next_cursor;
  } while (cursor && n < COUNT_CAP);
  return { n, more: Boolean(cursor) };
}

async function askReplayAll() {
  // The filter as it stands in the form: apply it, then count.
  dlq.filter = readFilter();
  await dlq.pager.first();
  const filter = Object.assign({}, dlq.filter);
  const { n, more } = await countMatching(filter);
  dlq.pending = filter;
  const parts = [];
  if (filter.endpoint_id) parts.push('endpoint ' + filter.endpoint_id);
  if (filter.event_type) parts.push('type ' + filter.event_type);
  if (filter.since) parts.push('since ' + filter.since);
  if (filter.until) parts.push('until ' + filter.until);
  $('replay-what').textContent = 'Dead deliveries matching ' + (parts.length ? parts.join(', ') : 'no filter (all of them)');
  $('replay-count').textContent = more ? 'more than ' + COUNT_CAP : String(n);
  $('replay-how').textContent = 'Counted just now by reading the dead-letter listing. The job replays the deliveries '
    + 'matching when it starts (deaths after that are not replayed), so its own count ("matched") may differ a little.';
  show($('replay-panel'), true);
  $('replay-confirm').focus();
}

async function confirmReplay() {
  const body = dlq.pending;
  if (!body) return;
  const job = await api('POST', '/v1/dlq/replay', body);
  dlq.pending = null;
  show($('replay-panel'), false);
  if (body.delivery_ids) {
    dlq.selected.clear();
    updateSelection();
  }
  watchJob($('job'), '/v1/replays/', job, () => dlq.pager.reload());
}

// ---------- jobs ----------

function renderJob(box, job, problem) {
  clear(box);
  const status = problem ? 'failed' : String(job.status || 'queued');
  box.setAttribute('data-status', status);
  box.setAttribute('data-id', job.id || '');
  box.append(el('p', {},
    el('strong', { text: 'Job ' + txt(job.id) + ': ' }),
    el('span', { 'data-test': 'job-status', text: status })));
  const skipped = job.skipped && typeof job.skipped === 'object'
    ? Object.entries(job.skipped).map(([k, v]) => k + ' ' + v).join(', ') : '';
  box.append(el('p', {
    text: 'matched ' + txt(job.matched) + ', replayed ' + txt(job.replayed) + ', failed ' + txt(job.failed)
      + ', skipped ' + (skipped || '0'),
  }));
  if (job.skipped_ids && typeof job.skipped_ids === 'object' && Object.keys(job.skipped_ids).length) {
    const ul = el('ul', { class: 'sub' });
    for (const [id, why] of Object.entries(job.skipped_ids).slice(0, 20)) ul.append(el('li', { text: id + ': ' + why }));
    box.append(ul);
  }
  if (problem) box.append(el('p', { class: 'bad', text: problem }));
  show(box, true);
}

// watchJob shows a job and polls it every second until it completes.
function watchJob(box, path, job, done) {
  for (const p of polls) if (p.box === box) clearTimeout(p.timer);
  polls = polls.filter((p) => p.box !== box);
  const poll = { box, timer: 0 };
  polls.push(poll);
  let failures = 0;
  const tick = async (j) => {
    renderJob(box, j);
    if (j.status === 'completed') {
      polls = polls.filter((p) => p !== poll);
      if (done) act(null, done);
      return;
    }
    poll.timer = setTimeout(async () => {
      try {
        const next = await api('GET', path + enc(job.id));
        failures = 0;
        if (polls.includes(poll)) tick(next);
      } catch (e) {
        if (!polls.includes(poll)) return;
        if (++failures >= 5 || (e instanceof APIError && e.status >= 400 && e.status < 500)) {
          renderJob(box, j, e.message);
          polls = polls.filter((p) => p !== poll);
        } else {
          tick(j);
        }
      }
    }, 1000);
  };
  tick(job);
}

// ---------- delivery detail ----------

const delivery = { id: null };

function openDelivery(id) {
  delivery.id = id;
  if (location.hash === '#delivery') route();
  else location.hash = '#delivery';
}

async function loadDelivery() {
  const id = delivery.id;
  $('delivery-id').textContent = id;
  for (const n of ['delivery-facts', 'attempts-body', 'headers-body', 'payload']) clear($(n));
  const d = await api('GET', '/v1/deliveries/' + enc(id));
  renderFacts(d);
  renderAttempts(d.attempt_log || []);
  const [ev, ep] = await Promise.all([
    api('GET', '/v1/events/' + enc(d.event_id)).catch(problemOf),
    api('GET', '/v1/endpoints/' + enc(d.endpoint_id)).catch(problemOf),
  ]);
  renderHeaders(d, ep);
  const pre = $('payload');
  if (ev.problem) pre.textContent = 'The payload cannot be shown: ' + ev.problem.message;
  else if (!('payload' in ev)) pre.textContent = 'The payload is past the retention period and is no longer kept.';
  else pre.textContent = JSON.stringify(ev.payload, null, 2);
}

// problemOf turns a failed read into something to show in its place; a
// 401 still ends the whole action.
function problemOf(e) {
  if (e instanceof APIError && e.status === 401) throw e;
  return { problem: e };
}

function renderFacts(d) {
  const dl = $('delivery-facts');
  const fact = (k, v, test) => {
    dl.append(el('dt', { text: k }), el('dd', test ? { 'data-test': test, text: txt(v) } : { text: txt(v) }));
  };
  fact('State', d.state, 'delivery-state');
  fact('Event', d.event_id, 'delivery-event');
  fact('Event type', d.event_type);
  fact('Endpoint', d.endpoint_id);
  fact('Attempts', d.attempts);
  fact('Last status', d.last_status);
  if (d.last_error) fact('Last error', d.last_error);
  if (d.dead_reason) fact('Dead reason', d.dead_reason);
  fact('Created (UTC)', time(d.created_at));
  if (d.delivered_at) fact('Delivered (UTC)', time(d.delivered_at));
  if (d.dead_at) fact('Dead (UTC)', time(d.dead_at));
  if (d.replayed_at) fact('Replayed (UTC)', time(d.replayed_at));
}

function renderAttempts(log) {
  const body = $('attempts-body');
  if (!log.length) {
    body.append(el('tr', {}, el('td', { colspan: 6, text: 'No attempt recorded yet.' })));
    return;
  }
  for (const a of log) {
    const status = a.status === undefined ? 'no response' : String(a.status);
    body.append(el('tr', { 'data-test': 'attempt-row' },
      cell(String(a.attempt) + (a.resend ? ' (resend)' : ''), '#'), cell(time(a.at), 'At'), cell(status, 'Status'),
      cell(ms(a.latency_ms), 'Latency'), cell(txt(a.error), 'Error'),
      cell(a.response ? el('pre', { class: 'excerpt', text: a.response }) : dash, 'Response excerpt')));
  }
}

function renderHeaders(d, ep) {
  const body = $('headers-body');
  const log = d.attempt_log || [];
  const last = log.length ? log[log.length - 1] : null;
  const ts = last && last.at ? String(Math.floor(new Date(last.at).getTime() / 1000)) : '(per attempt)';
  const rows = [
    ['Content-Type', 'application/json'],
    ['User-Agent', 'hookline/(version)'],
    ['webhook-id', d.id],
    ['webhook-timestamp', ts + (last ? ' (approx., from attempt ' + last.attempt + "'s start)" : '')],
    ['webhook-signature', 'v1,… (elided)'],
    ['Idempotency-Key', d.id],
    ['X-Idempotency-Key', d.id],
    ['X-Event-Id', d.event_id],
    ['X-Event-Type', d.event_type],
    ['X-Attempt', last ? String(last.attempt) : '(per attempt)'],
  ];
  for (const [k, v] of rows) body.append(el('tr', {}, cell(k, 'Header'), cell(txt(v), 'Value')));
  if (ep.problem) {
    body.append(el('tr', {}, el('td', { colspan: 2, text: 'The endpoint\'s custom headers cannot be shown: ' + ep.problem.message })));
    return;
  }
  // headers_redacted: this credential may not write the endpoint, so the
  // API shows the names and not the values (often the receiver's secrets).
  const hidden = ep.headers_redacted === true;
  for (const [k, v] of Object.entries(ep.headers || {})) {
    body.append(el('tr', { class: 'custom' }, cell(k + ' (endpoint header, current)', 'Header'),
      cell(hidden ? '(hidden: this link may not edit endpoints)' : String(v), 'Value')));
  }
}

// ---------- lookup ----------

async function lookup() {
  const id = $('lookup-event').value.trim();
  const out = $('lookup-results');
  clear(out);
  if (!id) throw new Error('Enter an event id.');
  const res = await api('GET', '/v1/events/' + enc(id) + '/deliveries');
  const list = Array.isArray(res && res.data) ? res.data : [];
  if (!list.length) {
    out.append(el('p', { class: 'hint', text: 'No delivery of event ' + id + ' is recorded (yet): a delivery shows once its first attempt is.' }));
    return;
  }
  const body = el('tbody');
  for (const d of list) {
    body.append(el('tr', { 'data-test': 'lookup-row', 'data-id': d.id },
      cell(button(d.id, 'lookup-open', () => openDelivery(d.id), { class: 'link' }), 'Delivery'),
      cell(txt(d.endpoint_id), 'Endpoint'), cell(txt(d.state), 'State'), cell(txt(d.attempts), 'Attempts'),
      cell(txt(d.last_status), 'Last status'), cell(time(d.delivered_at || d.dead_at), 'Delivered / dead at')));
  }
  const head = el('tr', {}, ...['Delivery', 'Endpoint', 'State', 'Attempts', 'Last status', 'Delivered / dead at (UTC)']
    .map((h) => el('th', { scope: 'col', text: h })));
  out.append(el('div', { class: 'scroll' }, el('table', { class: 'stack' }, el('thead', {}, head), body)));
}

// ---------- operator ----------

const operator = { pager: null, fallback: false };

async function loadTenants(cursor) {
  const body = $('tenants-body');
  let list;
  let next;
  try {
    const page = await api('GET', '/v1/admin/tenants' + query({ limit: 50, cursor }));
    list = (Array.isArray(page) ? page : (page && page.data) || []).map((t) => ({
      id: t.tenant_id || t.id, name: t.name, depth: t.dlq_depth,
    }));
    next = page && page.next_cursor;
    operator.fallback = false;
    $('tenants-note').textContent = 'Tenants that have had a dead delivery, deepest first.';
  } catch (e) {
    if (!(e instanceof APIError) || (e.status !== 404 && e.status !== 405)) throw e;
    // Older stacks: the dead-letter stats list only tenants with dead deliveries.
    const st = await api('GET', '/v1/admin/stats');
    operator.fallback = true;
    list = Object.entries(st.dlq_depth_by_tenant || {}).map(([id, depth]) => ({ id, depth }));
    list.sort((a, b) => b.depth - a.depth);
    $('tenants-note').textContent = 'Tenants with dead deliveries, deepest first; total ' + txt(st.dlq_depth_total) + '.';
  }
  clear(body);
  for (const t of list) {
    body.append(el('tr', { 'data-test': 'tenant-row', 'data-id': t.id },
      cell(el('div', {}, txt(t.id), t.name ? el('div', { class: 'sub', text: t.name }) : null), 'Tenant'),
      el('td', { 'data-label': 'DLQ depth', 'data-test': 'dlq-depth', text: txt(t.depth) })));
  }
  if (!list.length) {
    const none = operator.fallback ? 'No tenant has dead deliveries.' : 'No tenant has had a dead delivery.';
    body.append(el('tr', {}, el('td', { colspan: 2, text: none })));
  }
  return next;
}

async function loadAlarms() {
  const box = $('alarms');
  clear(box);
  let res;
  try {
    res = await api('GET', '/v1/admin/alarms');
  } catch (e) {
    if (e instanceof APIError && e.status === 401) throw e;
    box.append(el('p', { class: 'bad', 'data-test': 'alarms-error', text: e.message }));
    return;
  }
  const list = Array.isArray(res) ? res : (res && (res.data || res.alarms)) || [];
  if (!list.length) {
    box.append(el('p', { class: 'ok', text: 'No alarm is in ALARM.' }));
    return;
  }
  const ul = el('ul', { class: 'alarms' });
  for (const a of list) {
    ul.append(el('li', { 'data-test': 'alarm' },
      el('strong', { text: txt(a.name) }), ' ', el('span', { class: 'sub', text: time(a.updated_at) }),
      el('div', { text: txt(a.reason) })));
  }
  box.append(ul);
}

async function loadOperator() {
  await Promise.all([operator.pager.first(), loadAlarms()]);
}

async function redrive() {
  const job = await api('POST', '/v1/admin/dlq/redrive');
  watchJob($('redrive-job'), '/v1/admin/replays/', job, () => operator.pager.reload());
}

// ---------- wiring ----------

function wire() {
  const form = $('signin');
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const active = document.activeElement;
    const op = active === $('operator-key') || (e.submitter && e.submitter.id === 'signin-operator');
    const input = op ? $('operator-key') : $('api-key');
    const cred = input.value.trim();
    if (!cred) {
      showError(new Error(op ? 'Enter the operator key.' : 'Enter an API key.'));
      input.focus();
      return;
    }
    form.reset();
    signIn(cred, op ? 'operator' : 'tenant', 'API key');
  });
  $('signout').addEventListener('click', () => endSession('You signed out.'));
  // The link of the view already shown reloads it (no hashchange comes).
  for (const a of $('nav').querySelectorAll('a')) {
    a.addEventListener('click', () => {
      if (location.hash === '#' + a.dataset.view) route();
    });
  }

  endpoints.pager = new Pager('endpoints', loadEndpoints);
  $('endpoint-create').addEventListener('click', () => {
    clearError();
    openForm(null);
  });
  $('endpoints-refresh').addEventListener('click', (e) => act(e.currentTarget, () => Promise.all([endpoints.pager.reload(), showNotices()])));
  $('endpoint-form').addEventListener('submit', (e) => {
    e.preventDefault();
    act($('endpoint-save'), saveEndpoint);
  });
  $('notices-form').addEventListener('submit', (e) => {
    e.preventDefault();
    act($('notices-add'), addNotice);
  });
  $('endpoint-type').addEventListener('change', showTypeFields);
  $('endpoint-auth').addEventListener('change', showAuthFields);
  $('endpoint-cancel').addEventListener('click', () => {
    show($('endpoint-form'), false);
    endpoints.editing = null;
  });
  $('secret-copy').addEventListener('click', copySecret);
  $('secret-dismiss').addEventListener('click', () => {
    clear($('secret'));
    show($('secret-panel'), false);
  });
  $('test-open').addEventListener('click', () => openDelivery($('test-delivery').textContent));

  dlq.pager = new Pager('dlq', loadDLQ);
  $('dlq-filters').addEventListener('submit', (e) => {
    e.preventDefault();
    act($('filter-apply'), async () => {
      dlq.filter = readFilter();
      dlq.selected.clear();
      show($('replay-panel'), false);
      await dlq.pager.first();
    });
  });
  $('dlq-select-page').addEventListener('change', (e) => selectPage(e.currentTarget.checked));
  $('replay-selected').addEventListener('click', (e) => act(e.currentTarget, async () => askReplaySelected()));
  $('replay-all').addEventListener('click', (e) => act(e.currentTarget, askReplayAll));
  $('replay-confirm').addEventListener('click', (e) => act(e.currentTarget, confirmReplay));
  $('replay-cancel').addEventListener('click', () => {
    dlq.pending = null;
    show($('replay-panel'), false);
  });

  $('delivery-refresh').addEventListener('click', (e) => act(e.currentTarget, loadDelivery));
  $('delivery-back').addEventListener('click', () => history.back());
  $('lookup-form').addEventListener('submit', (e) => {
    e.preventDefault();
    act($('lookup-go'), lookup);
  });

  messages.wire();

  operator.pager = new Pager('tenants', loadTenants);
  $('redrive').addEventListener('click', (e) => act(e.currentTarget, redrive));
}

// takePortal signs in with a portal link's token (#portal=<token>), taking
// it out of the address bar and the history entry at once. It answers
// whether there was one.
function takePortal() {
  const m = /^#portal=(.+)$/.exec(location.hash);
  if (!m) return false;
  history.replaceState(null, '', location.pathname + location.search);
  let token = m[1];
  try {
    token = decodeURIComponent(token);
  } catch (_) {
    // keep it as it came
  }
  signIn(token, 'tenant', 'portal link');
  return true;
}

// messages is the Messages view (log.js), given the helpers it renders with.
const messages = messagesView({
  $, el, api, cell, wordsCell, tokens, button, clear, show, txt, time, query, enc, parseTime, openDelivery, fillEndpointChoices, Pager, act, route,
});
// The Replay view (jobs.js), lent the helpers it renders with.
const replay = replayView({ $, el, clear, show, act, api, may, parseTime, openDelivery, enc, query });
// The Event types view (types.js).
const types = eventTypesView({ $, el, clear, show, act, api, may, enc, openDelivery });

function start() {
  wire();
  window.addEventListener('hashchange', () => {
    if (!takePortal()) route();
  });
  if (!takePortal()) route();
}

start();
