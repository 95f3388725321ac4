// hookline console: the tenant-wide overview (all endpoints' attempts,
// failures by class and p95 latency over the last 24 hours or 7 days), from
// GET /v1/metrics/attempts?group_by=endpoint, and the same endpoints'
// attempts by event type (group_by=event_type). Data is rendered as text.
import { CLASSES, h, chartsOf, classChart, rangeWindow, qs } from './charts.js';

const pct = (r) => (typeof r === 'number' ? (r * 100).toFixed(1) + '%' : '—');
const ms = (v) => (typeof v === 'number' ? Math.round(v) + ' ms' : '—');

// state is the overview's range and the endpoints page it shows (cursor:
// null for the tenant's first MaxMetricsEndpoints).
const state = { range: '24h', cursor: null, back: [] };

function failuresOf(c) {
  const f = (c && c.failures) || {};
  let n = 0;
  for (const k of CLASSES) n += typeof f[k] === 'number' ? f[k] : 0;
  return n;
}

function endpointRows(view, labels) {
  const rows = [];
  const groups = Array.isArray(view.groups) ? view.groups : [];
  for (const g of groups) {
    const lat = g.latency_ms || {};
    const label = labels.get(g.endpoint_id) || g.endpoint_id;
    rows.push(h('tr', { 'data-test': 'overview-row', 'data-id': g.endpoint_id, 'data-attempts': g.attempts, 'data-failed': failuresOf(g) },
      h('td', { 'data-label': 'Endpoint' }, h('div', { class: 'url', text: label }), h('div', { class: 'sub', text: g.endpoint_id })),
      h('td', { 'data-label': 'Attempts', text: String(g.attempts) }),
      h('td', { 'data-label': 'Success', text: pct(g.success_rate) }),
      h('td', { 'data-label': 'Failures', text: String(failuresOf(g)) }),
      h('td', { 'data-label': 'p95', text: ms(lat.p95) })));
  }
  return rows;
}

function endpointTable(view, labels) {
  const rows = endpointRows(view, labels);
  if (!rows.length) return h('p', { class: 'hint', 'data-test': 'overview-empty', text: 'No endpoints yet.' });
  return h('div', { class: 'scroll' }, h('table', { class: 'stack', 'data-test': 'overview-endpoints' },
    h('caption', { class: 'sr', text: 'Each endpoint\'s attempts over the range' }),
    h('thead', {}, h('tr', {}, ...['Endpoint', 'Attempts', 'Success', 'Failures', 'p95'].map((c) => h('th', { scope: 'col', text: c })))),
    h('tbody', {}, ...rows)));
}

function typeRows(byType) {
  const groups = Array.isArray(byType && byType.groups) ? byType.groups : [];
  return groups.map((g) => {
    const lat = g.latency_ms || {};
    // The last group sums the types past the deployment's cap
    // (maxMetricsEventTypes): it has other_types and no event_type.
    const label = g.other_types ? g.other_types + ' other types' : g.event_type;
    return h('tr', { 'data-test': 'overview-type-row', 'data-type': g.event_type || '', 'data-attempts': g.attempts, 'data-failed': failuresOf(g) },
      h('td', { 'data-label': 'Event type', class: 'url', text: label }),
      h('td', { 'data-label': 'Attempts', text: String(g.attempts) }),
      h('td', { 'data-label': 'Success', text: pct(g.success_rate) }),
      h('td', { 'data-label': 'Failures', text: String(failuresOf(g)) }),
      h('td', { 'data-label': 'p95', text: ms(lat.p95) }));
  });
}

// typeTable is the endpoints' attempts by event type, the most attempted
// first (as the API orders them).
function typeTable(byType) {
  const rows = typeRows(byType);
  if (!rows.length) return h('p', { class: 'hint', 'data-test': 'overview-types-empty', text: 'No attempts in this range.' });
  return h('div', { class: 'scroll' }, h('table', { class: 'stack', 'data-test': 'overview-types' },
    h('caption', { class: 'sr', text: 'The attempts of each event type over the range' }),
    h('thead', {}, h('tr', {}, ...['Event type', 'Attempts', 'Success', 'Failures', 'p95'].map((c) => h('th', { scope: 'col', text: c })))),
    h('tbody', {}, ...rows)));
}

function rangeButtons(reload) {
  return h('div', { class: 'bar', role: 'group', 'aria-label': 'Range' }, ...['24h', '7d'].map((k) => {
    const b = h('button', { type: 'button', 'data-test': 'overview-range-' + k, 'aria-pressed': String(state.range === k),
      text: k === '24h' ? 'Last 24 hours' : 'Last 7 days' });
    b.addEventListener('click', () => reload(b, () => {
      state.range = k;
    }));
    return b;
  }));
}

function pager(view, reload) {
  const box = h('div', { class: 'pager' });
  if (state.cursor) {
    const prev = h('button', { type: 'button', 'data-test': 'overview-prev', text: 'Previous endpoints' });
    prev.addEventListener('click', () => reload(prev, () => {
      state.cursor = state.back.pop() || null;
    }));
    box.append(prev);
  }
  if (view.next_cursor) {
    const next = h('button', { type: 'button', 'data-test': 'overview-next', text: 'Next endpoints' });
    next.addEventListener('click', () => reload(next, () => {
      state.back.push(state.cursor);
      state.cursor = view.next_cursor;
    }));
    box.append(next, h('span', { class: 'hint', text: 'These counts cover the endpoints listed here; the next ones are on the next page.' }));
  }
  return box;
}

// loadOverview reads the metrics and the endpoints' names with get (the
// console's API call) and renders them into root; act runs a button's
// action with the console's busy and error handling. fresh starts again
// at the tenant's first endpoints (opening the view; a new session).
export async function loadOverview(get, act, root, fresh) {
  if (fresh) {
    state.cursor = null;
    state.back = [];
  }
  const win = rangeWindow(state.range, Date.now());
  const [view, eps, byType] = await Promise.all([
    get('/v1/metrics/attempts' + qs(Object.assign({ group_by: 'endpoint', cursor: state.cursor }, win.query))),
    get('/v1/endpoints' + qs({ limit: 50, cursor: state.cursor })),
    get('/v1/metrics/attempts' + qs(Object.assign({ group_by: 'event_type', cursor: state.cursor }, win.query))),
  ]);
  const labels = new Map();
  for (const ep of Array.isArray(eps && eps.data) ? eps.data : []) labels.set(ep.id, ep.url || ep.target || ep.id);
  const reload = (btn, change) => act(btn, async () => {
    change();
    await loadOverview(get, act, root);
  });
  while (root.firstChild) root.removeChild(root.firstChild);
  root.append(rangeButtons(reload), chartsOf(win, view, 'overview-charts'),
    h('h2', { text: 'Attempts by outcome' }), classChart(win, view.totals),
    h('h2', { text: 'Endpoints' }), endpointTable(view, labels),
    h('h2', { text: 'By event type' }), typeTable(byType), pager(view, reload));
}
