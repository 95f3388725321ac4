// hookline console: charts of attempts, failures by class and p95 latency,
// drawn as inline SVG with DOM APIs (no library), from GET
// /v1/metrics/attempts. The rules of app.js hold here: API data is set as
// text (textContent) or as numbers in attributes this file names, never
// parsed as markup, and no URL from data goes into a link.

// SVG_NS is the SVG namespace's name (a name, never fetched).
const SVG_NS = 'http://www.w3.org/2000/svg';

// The failure classes, in the API's order, and the colour of each class.
export const CLASSES = ['timeout', 'network', 'http_4xx', 'http_429', 'http_5xx', 'http_other', 'refused'];
const COLORS = {
  delivered: '#2e7d32', timeout: '#ef6c00', network: '#6d4c41', http_4xx: '#f9a825',
  http_429: '#8e24aa', http_5xx: '#c62828', http_other: '#546e7a', refused: '#263238',
};
const LABELS = {
  delivered: 'delivered', timeout: 'timeout', network: 'network', http_4xx: 'HTTP 4xx',
  http_429: 'HTTP 429', http_5xx: 'HTTP 5xx', http_other: 'other HTTP', refused: 'refused',
};

const HOUR = 3600e3;
const DAY = 24 * HOUR;

// The ranges the charts show: the last 24 hours by hour, 7 days by day.
export const RANGES = {
  '24h': { label: 'last 24 hours', hours: 24, granularity: 'hour' },
  '7d': { label: 'last 7 days', hours: 168, granularity: 'day' },
};

// Chart geometry, in viewBox units (the SVG scales to its box's width).
const W = 360;
const H = 150;
const PAD = { left: 40, right: 6, top: 22, bottom: 20 };
const FONT = 12;
const PLOT_W = W - PAD.left - PAD.right;
const PLOT_H = H - PAD.top - PAD.bottom;

// ---------- DOM (text only) ----------

const HTML_ATTRS = new Set(['id', 'class', 'role', 'type', 'scope', 'aria-label', 'aria-pressed', 'aria-labelledby']);
const SVG_ATTRS = new Set(['viewBox', 'width', 'height', 'x', 'y', 'x1', 'y1', 'x2', 'y2', 'r', 'cx', 'cy', 'points',
  'fill', 'stroke', 'stroke-width', 'class', 'role', 'id', 'aria-labelledby', 'aria-hidden', 'text-anchor',
  'font-size', 'focusable', 'preserveAspectRatio']);

function setAttrs(e, attrs, allowed) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') e.textContent = String(v);
    else if (allowed.has(k) || k.startsWith('data-')) e.setAttribute(k, String(v));
    else throw new Error('attribute not allowed: ' + k);
  }
}

function add(e, children) {
  for (const c of children) {
    if (c !== undefined && c !== null) e.append(c);
  }
  return e;
}

// h builds an HTML element; children are nodes or strings (made text).
export function h(tag, attrs, ...children) {
  const e = document.createElement(tag);
  setAttrs(e, attrs, HTML_ATTRS);
  return add(e, children);
}

// s builds an SVG element.
function s(tag, attrs, ...children) {
  const e = document.createElementNS(SVG_NS, tag);
  setAttrs(e, attrs, SVG_ATTRS);
  return add(e, children);
}

const r1 = (v) => Math.round(v * 10) / 10;
const pct = (r) => (typeof r === 'number' ? (r * 100).toFixed(1) + '%' : '—');
const ms = (v) => (typeof v === 'number' ? Math.round(v) + ' ms' : '—');
const num = (v) => (typeof v === 'number' && isFinite(v) ? v : 0);
const iso = (t) => new Date(t).toISOString().replace('.000Z', 'Z');
const hhmm = (t) => iso(t).slice(11, 16);
const mmdd = (t) => iso(t).slice(5, 10);

let ids = 0;
const uid = (p) => p + '-' + (++ids);

// ---------- data ----------

// window is the range ending at the next whole hour (so the current hour
// is in it): since, until, as milliseconds and the query.
export function rangeWindow(key, now) {
  const r = RANGES[key];
  const until = Math.floor(now / HOUR) * HOUR + HOUR;
  const since = until - r.hours * HOUR;
  return { since, until, granularity: r.granularity, label: r.label,
    query: { since: iso(since), until: iso(until), granularity: r.granularity } };
}

// slots are the periods of [since, until), each with the series' counters
// of its start (zero when the API listed none).
export function slots(win, series) {
  const step = win.granularity === 'day' ? DAY : HOUR;
  const by = new Map();
  for (const p of Array.isArray(series) ? series : []) by.set(Date.parse(p.start), p);
  const out = [];
  for (let t = win.since; t < win.until; t += step) {
    const p = by.get(t) || {};
    const f = p.failures || {};
    const failures = {};
    let failed = 0;
    for (const c of CLASSES) {
      failures[c] = num(f[c]);
      failed += failures[c];
    }
    const p95 = p.latency_ms && typeof p.latency_ms.p95 === 'number' ? p.latency_ms.p95 : null;
    out.push({ start: t, end: t + step, attempts: num(p.attempts), delivered: num(p.delivered), failed, failures, p95 });
  }
  return out;
}

function slotLabel(slot, granularity) {
  return granularity === 'day' ? mmdd(slot.start) + ' ' + hhmm(slot.start) + ' to ' + mmdd(slot.end) + ' ' + hhmm(slot.end)
    : mmdd(slot.start) + ' ' + hhmm(slot.start) + ' UTC';
}

function failureText(failures) {
  const parts = [];
  for (const c of CLASSES) {
    if (failures[c]) parts.push(failures[c] + ' ' + LABELS[c]);
  }
  return parts.length ? parts.join(', ') : 'none';
}

// summaryText says in words what the charts of totals t over win show.
export function summaryText(win, t) {
  const f = (t && t.failures) || {};
  const failures = {};
  for (const c of CLASSES) failures[c] = num(f[c]);
  const lat = (t && t.latency_ms) || {};
  return win.label[0].toUpperCase() + win.label.slice(1) + ': ' + num(t && t.attempts) + ' attempts, ' + num(t && t.delivered) + ' delivered (' +
    pct(t && t.success_rate) + '); failures: ' + failureText(failures) + '; latency p50 ' + ms(lat.p50) +
    ', p95 ' + ms(lat.p95) + ', p99 ' + ms(lat.p99) + '.';
}

// ---------- charts ----------

// frame is a chart's SVG: its title and description (what a screen reader
// reads), a visible heading, and its plot's height as data-plot-height.
function frame(title, heading, desc, test) {
  const tid = uid('chart-title');
  const did = uid('chart-desc');
  return s('svg', { viewBox: '0 0 ' + W + ' ' + H, width: '100%', role: 'img', 'aria-labelledby': tid + ' ' + did,
    focusable: 'false', class: 'chart', 'data-test': test, 'data-plot-height': PLOT_H },
  s('title', { id: tid, text: title }), s('desc', { id: did, text: desc }),
  s('text', { x: PAD.left, y: FONT + 2, 'font-size': FONT, fill: '#1d232a', text: heading }));
}

function axes(svg, max, unit, ss, granularity) {
  const base = PAD.top + PLOT_H;
  svg.append(
    s('line', { x1: PAD.left, y1: base, x2: W - PAD.right, y2: base, stroke: '#8a96a3', 'stroke-width': 1 }),
    s('line', { x1: PAD.left, y1: PAD.top, x2: W - PAD.right, y2: PAD.top, stroke: '#e3e7eb', 'stroke-width': 1 }),
    s('text', { x: PAD.left - 3, y: PAD.top + 4, 'text-anchor': 'end', 'font-size': FONT, fill: '#5b6673', text: max + unit }),
    s('text', { x: PAD.left - 3, y: base, 'text-anchor': 'end', 'font-size': FONT, fill: '#5b6673', text: '0' }));
  if (!ss.length) return;
  const at = (t) => (granularity === 'day' ? mmdd(t) : mmdd(t) + ' ' + hhmm(t));
  svg.append(
    s('text', { x: PAD.left, y: H - 4, 'font-size': FONT, fill: '#5b6673', text: at(ss[0].start) }),
    s('text', { x: W - PAD.right, y: H - 4, 'text-anchor': 'end', 'font-size': FONT, fill: '#5b6673', text: at(ss[ss.length - 1].end) + ' UTC' }));
}

// attemptsChart draws one stacked bar a period: delivered at the bottom,
// then each failure class. Each bar carries its counts as data-*.
export function attemptsChart(win, ss, desc) {
  const max = Math.max(1, ...ss.map((x) => x.attempts));
  const svg = frame('Attempts per ' + win.granularity + ', ' + win.label + ', by outcome', 'Attempts per ' + win.granularity,
    desc, 'chart-attempts');
  axes(svg, max, '', ss, win.granularity);
  const slotW = PLOT_W / Math.max(1, ss.length);
  const barW = Math.max(1, slotW * 0.8);
  ss.forEach((x, i) => {
    const attrs = { class: 'bar', 'data-test': 'chart-bar', 'data-start': iso(x.start), 'data-attempts': x.attempts,
      'data-delivered': x.delivered, 'data-failed': x.failed };
    for (const c of CLASSES) attrs['data-' + c.replace('_', '')] = x.failures[c];
    const g = s('g', attrs, s('title', { text: slotLabel(x, win.granularity) + ': ' + x.attempts + ' attempts, ' +
      x.delivered + ' delivered; failures: ' + failureText(x.failures) }));
    let y = PAD.top + PLOT_H;
    const left = PAD.left + i * slotW + (slotW - barW) / 2;
    for (const [cls, n] of [['delivered', x.delivered], ...CLASSES.map((c) => [c, x.failures[c]])]) {
      if (!n) continue;
      const bh = (n / max) * PLOT_H;
      y -= bh;
      g.append(s('rect', { x: r1(left), y: r1(y), width: r1(barW), height: r1(bh), fill: COLORS[cls], 'data-class': cls, 'data-count': n }));
    }
    svg.append(g);
  });
  return svg;
}

// latencyChart draws the p95 latency of each period with attempts, as a
// line through one point a period.
export function latencyChart(win, ss, desc) {
  const with95 = ss.map((x, i) => [x, i]).filter(([x]) => x.p95 !== null);
  const max = Math.max(1, ...with95.map(([x]) => x.p95));
  const svg = frame('p95 latency per ' + win.granularity + ', ' + win.label, 'p95 latency (ms)', desc, 'chart-latency');
  axes(svg, Math.round(max), '', ss, win.granularity);
  const slotW = PLOT_W / Math.max(1, ss.length);
  const pt = ([x, i]) => [r1(PAD.left + i * slotW + slotW / 2), r1(PAD.top + PLOT_H - (x.p95 / max) * PLOT_H)];
  if (with95.length > 1) {
    svg.append(s('polyline', { points: with95.map((p) => pt(p).join(',')).join(' '), fill: 'none', stroke: '#1a5fb4', 'stroke-width': 1.5 }));
  }
  for (const p of with95) {
    const [cx, cy] = pt(p);
    svg.append(s('circle', { cx, cy, r: 2.5, fill: '#1a5fb4', 'data-test': 'chart-point', 'data-start': iso(p[0].start), 'data-p95': p[0].p95 },
      s('title', { text: slotLabel(p[0], win.granularity) + ': p95 ' + ms(p[0].p95) })));
  }
  return svg;
}

// legend names the colours of the classes that ss has.
function legend(ss) {
  const seen = ['delivered', ...CLASSES].filter((c) => ss.some((x) => (c === 'delivered' ? x.delivered : x.failures[c])));
  return h('ul', { class: 'legend', 'aria-label': 'Legend' }, ...seen.map((c) => h('li', {},
    s('svg', { viewBox: '0 0 10 10', width: 10, height: 10, 'aria-hidden': 'true', focusable: 'false' },
      s('rect', { x: 0, y: 0, width: 10, height: 10, fill: COLORS[c] })), ' ' + LABELS[c])));
}

// chartsOf is the block for one range: its summary, the two charts and a
// legend.
export function chartsOf(win, view, test) {
  const ss = slots(win, view && view.series);
  const desc = summaryText(win, view && view.totals);
  return h('figure', { class: 'charts', 'data-test': test, 'data-range': win.granularity === 'day' ? '7d' : '24h' },
    h('figcaption', { 'data-test': 'chart-summary', text: desc }),
    h('div', { class: 'chart-pair' }, attemptsChart(win, ss, desc), latencyChart(win, ss, desc)),
    legend(ss));
}

// endpointCharts shows an endpoint's charts (24 hours and 7 days) in
// panel, read with get (the console's API call) from the metrics route.
export async function endpointCharts(get, panel, endpoint, label) {
  const now = Date.now();
  const wins = ['24h', '7d'].map((k) => rangeWindow(k, now));
  const views = await Promise.all(wins.map((w) => get('/v1/metrics/attempts' +
    qs(Object.assign({ endpoint_id: endpoint }, w.query)))));
  while (panel.firstChild) panel.removeChild(panel.firstChild);
  panel.setAttribute('data-id', endpoint);
  const close = h('button', { type: 'button', 'data-test': 'endpoint-charts-close', text: 'Close charts' });
  close.addEventListener('click', () => {
    panel.hidden = true;
  });
  panel.append(h('div', { class: 'bar' }, h('h2', { text: 'Charts of ' + label }), close));
  wins.forEach((w, i) => panel.append(chartsOf(w, views[i], 'endpoint-charts-' + (i ? '7d' : '24h'))));
  panel.hidden = false;
}

// qs is a query string of the non-empty params.
export function qs(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, v);
  }
  const str = q.toString();
  return str ? '?' + str : '';
}

// classChart draws the attempts of each outcome (delivered and each failure
// class) over the range as horizontal bars, each carrying its count.
export function classChart(win, totals) {
  const t = totals || {};
  const f = t.failures || {};
  const rows = [['delivered', num(t.delivered)], ...CLASSES.map((c) => [c, num(f[c])])];
  const max = Math.max(1, ...rows.map(([, n]) => n));
  const rowH = 18;
  const left = 84;
  const total = num(t.attempts);
  const desc = rows.map(([c, n]) => LABELS[c] + ' ' + n).join(', ');
  const tid = uid('chart-title');
  const did = uid('chart-desc');
  const svg = s('svg', { viewBox: '0 0 ' + W + ' ' + (rows.length * rowH + 4), width: '100%', role: 'img',
    'aria-labelledby': tid + ' ' + did, focusable: 'false', class: 'chart', 'data-test': 'chart-classes' },
  s('title', { id: tid, text: 'Attempts by outcome, ' + win.label }), s('desc', { id: did, text: desc + '.' }));
  rows.forEach(([c, n], i) => {
    const y = 2 + i * rowH;
    const bw = (n / max) * (W - left - 84);
    const share = total ? ' (' + ((n / total) * 100).toFixed(1) + '%)' : '';
    svg.append(s('g', { 'data-test': 'class-bar', 'data-class': c, 'data-count': n },
      s('text', { x: left - 4, y: y + 13, 'text-anchor': 'end', 'font-size': FONT, fill: '#1d232a', text: LABELS[c] }),
      s('rect', { x: left, y: y + 3, width: r1(Math.max(n ? 1 : 0, bw)), height: rowH - 5, fill: COLORS[c] }),
      s('text', { x: r1(left + bw + 4), y: y + 13, 'font-size': FONT, fill: '#1d232a', text: n + share })));
  });
  return svg;
}
