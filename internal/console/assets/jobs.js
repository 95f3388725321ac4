// hookline console: the Replay view. Replays every delivery since a time
// (POST /v1/replays) and cancels an endpoint's pending deliveries
// (POST /v1/endpoints/{id}/cancel-pending), each after a confirmation, and
// follows the job (GET /v1/replays/{id}) until it completes. Same rules as
// app.js (held by console_test.go): data as text only, no URL from data in
// a link or a source.
'use strict';

const STATES = ['delivered', 'dead', 'pending', 'cancelled'];

// replayView builds the view inside its section from the helpers app.js
// lends it, and answers what app.js calls: load() when the view opens.
export function replayView(ui) {
  const { $, el, clear, show, act, api, may, parseTime, openDelivery, enc, query } = ui;
  const v = { built: false, pending: null, timer: 0, watching: null, epoch: null };

  const input = (id, label, hint) => {
    const i = el('input', { id, 'data-test': id, type: 'text' });
    i.spellcheck = false;
    if (hint) i.placeholder = hint;
    return el('div', {}, el('label', { for: id, text: label }), i);
  };
  const select = (id, label) => el('div', {}, el('label', { for: id, text: label }), el('select', { id, 'data-test': id }));

  function build() {
    if (v.built) return;
    v.built = true;
    const root = $('replay-view');
    const states = el('fieldset', { class: 'states' }, el('legend', { text: 'States' }));
    for (const s of STATES) {
      const box = el('input', { type: 'checkbox', id: 'since-state-' + s, 'data-test': 'since-state-' + s, checked: true });
      states.append(el('span', { class: 'check' }, box, el('label', { for: 'since-state-' + s, text: s })));
    }
    const since = el('form', { id: 'since-form', class: 'filters', 'data-test': 'since-form' },
      input('since-since', 'Events since (RFC 3339 or local "2026-01-31 14:00")', 'an hour ago'),
      input('since-until', 'Until (empty: now)'),
      select('since-endpoint', 'Endpoint'),
      input('since-type', 'Event type (empty: any)'),
      states,
      el('div', { class: 'actions' }, el('button', { type: 'submit', id: 'since-ask', 'data-test': 'since-ask', text: 'Replay since…' })));
    const cancel = el('form', { id: 'cancel-form', class: 'filters', 'data-test': 'cancel-form' },
      select('cancel-endpoint', 'Endpoint'),
      input('cancel-before', 'Events before (empty: now)'),
      el('div', { class: 'actions' }, el('button', { type: 'submit', id: 'cancel-ask', 'data-test': 'cancel-ask', text: 'Cancel pending…' })));
    const confirm = el('div', { id: 'jobs-confirm', class: 'panel', 'data-test': 'jobs-confirm', role: 'alertdialog', 'aria-label': 'Confirm' },
      el('p', { id: 'jobs-confirm-what', 'data-test': 'jobs-confirm-what' }),
      el('p', { id: 'jobs-confirm-how', class: 'hint' }),
      el('div', { class: 'actions' },
        el('button', { type: 'button', id: 'jobs-confirm-go', 'data-test': 'jobs-confirm-go', class: 'primary' }),
        el('button', { type: 'button', id: 'jobs-confirm-no', 'data-test': 'jobs-confirm-no', text: 'Back' })));
    const job = el('div', { id: 'jobs-job', class: 'panel job', 'data-test': 'jobs-job', role: 'status' });
    root.append(
      el('h2', { id: 'since-h', text: 'Replay since a time' }),
      el('p', { id: 'since-hint', class: 'hint', text: 'Sends every delivery of the events in the range again, whatever its state, each with its own '
        + 'webhook-id: for a receiver that lost its data. Delivered ones are rebuilt from the event\'s payload, kept 15 days; '
        + 'older ones are counted as not rebuildable.' }),
      since,
      el('h2', { id: 'cancel-h', text: 'Cancel pending deliveries' }),
      el('p', { id: 'cancel-hint', class: 'hint', text: 'Marks an endpoint\'s pending deliveries cancelled: they are never sent '
        + '(a replay since a time can send them later). For an endpoint being retired.' }),
      cancel, confirm, job);
    show(confirm, false);
    show(job, false);
    since.addEventListener('submit', (e) => { e.preventDefault(); act($('since-ask'), askSince); });
    cancel.addEventListener('submit', (e) => { e.preventDefault(); act($('cancel-ask'), askCancel); });
    $('jobs-confirm-go').addEventListener('click', (e) => act(e.currentTarget, go));
    $('jobs-confirm-no').addEventListener('click', () => { v.pending = null; show(confirm, false); });
  }

  async function fillEndpoints() {
    const page = await api('GET', '/v1/endpoints' + query({ limit: 100 }));
    for (const [id, any] of [['since-endpoint', true], ['cancel-endpoint', false]]) {
      const s = $(id);
      const keep = s.value;
      clear(s);
      if (any) s.append(Object.assign(el('option', { text: 'Any endpoint' }), { value: '' }));
      for (const ep of (page && page.data) || []) {
        const d = String(ep.description || '');
        const label = ep.id + (d ? ' (' + (d.length > 60 ? d.slice(0, 59) + '…' : d) + ')' : '');
        s.append(Object.assign(el('option', { text: label }), { value: ep.id }));
      }
      if (keep) s.value = keep;
    }
  }

  function askSince() {
    const sinceText = $('since-since').value.trim();
    const body = {
      since: sinceText ? parseTime(sinceText, 'Events since') : new Date(Date.now() - 3600e3).toISOString(),
      until: parseTime($('since-until').value, 'Until'),
      endpoint_id: $('since-endpoint').value || undefined,
      event_type: $('since-type').value.trim() || undefined,
    };
    const states = STATES.filter((s) => $('since-state-' + s).checked);
    if (!states.length) throw new Error('States: choose at least one.');
    if (states.length < STATES.length) body.states = states;
    const parts = ['events since ' + body.since, body.until ? 'until ' + body.until : 'until now'];
    if (body.endpoint_id) parts.push('endpoint ' + body.endpoint_id);
    if (body.event_type) parts.push('type ' + body.event_type);
    ask({ path: '/v1/replays', body }, 'Replay every ' + states.join(', ') + ' delivery of ' + parts.join(', ') + '?',
      'Each is sent again with its own webhook-id and a fresh retry schedule, paced; the receiver gets duplicates of what it had.',
      'Replay');
  }

  function askCancel() {
    const ep = $('cancel-endpoint').value;
    if (!ep) throw new Error('Endpoint: choose the endpoint whose pending deliveries to cancel.');
    const before = parseTime($('cancel-before').value, 'Events before');
    ask({ path: '/v1/endpoints/' + enc(ep) + '/cancel-pending', body: before ? { before } : {} },
      'Cancel the pending deliveries of endpoint ' + ep + ' (events ' + (before ? 'before ' + before : 'until now') + ')?',
      'They will not be sent. Deliveries already being attempted may still arrive; delivered and dead ones are left as they are.',
      'Cancel them');
  }

  function ask(pending, what, how, label) {
    v.pending = pending;
    $('jobs-confirm-what').textContent = what;
    $('jobs-confirm-how').textContent = how;
    $('jobs-confirm-go').textContent = label;
    show($('jobs-confirm'), true);
    $('jobs-confirm-go').focus();
  }

  async function go() {
    const p = v.pending;
    if (!p) return;
    const job = await api('POST', p.path, p.body);
    v.pending = null;
    show($('jobs-confirm'), false);
    watch(job);
  }

  function line(label, value, test) {
    return el('p', {}, el('span', { text: label + ' ' }), el('strong', { 'data-test': test, text: String(value ?? 0) }));
  }

  function render(job, problem) {
    const box = $('jobs-job');
    clear(box);
    const status = problem ? 'failed' : String(job.status || 'queued');
    box.setAttribute('data-status', status);
    box.setAttribute('data-kind', String(job.kind || ''));
    const kind = job.kind === 'cancel' ? 'Cancel' : 'Replay since';
    box.append(el('p', {}, el('strong', { text: kind + ' job ' + String(job.id || '') + ': ' }),
      el('span', { 'data-test': 'jobs-status', text: status })));
    box.append(line('Looked at', job.matched, 'jobs-matched'));
    if (job.kind === 'cancel') {
      box.append(line('Cancelled', job.cancelled, 'jobs-cancelled'));
    } else {
      box.append(line('Replayed', job.replayed, 'jobs-replayed'), line('Not rebuildable', job.not_rebuilt, 'jobs-not-rebuilt'));
    }
    const skipped = job.skipped && typeof job.skipped === 'object' ? Object.entries(job.skipped) : [];
    if (skipped.length) box.append(el('p', { class: 'hint', text: 'Skipped: ' + skipped.map(([k, n]) => k + ' ' + n).join(', ') }));
    const ids = job.kind === 'cancel' ? (job.cancelled_ids || []).map((id) => [id, 'cancelled'])
      : Object.entries(job.skipped_ids || {});
    if (ids.length) {
      const ul = el('ul', { class: 'sub', 'data-test': 'jobs-ids' });
      for (const [id, why] of ids.slice(0, 20)) {
        const b = el('button', { type: 'button', class: 'link', text: String(id) });
        b.addEventListener('click', () => openDelivery(String(id)));
        ul.append(el('li', {}, b, el('span', { text: ' ' + String(why) })));
      }
      box.append(ul);
    }
    if (problem) box.append(el('p', { class: 'bad', text: problem }));
    show(box, true);
  }

  // watch shows a job and reads it every second until it completes.
  function watch(job) {
    clearTimeout(v.timer);
    v.watching = job.id;
    const tick = (j) => {
      render(j);
      if (j.status === 'completed' || v.watching !== job.id) return;
      v.timer = setTimeout(async () => {
        try {
          const next = await api('GET', '/v1/replays/' + enc(job.id));
          if (v.watching === job.id) tick(next);
        } catch (e) {
          if (v.watching === job.id) render(j, e.message);
        }
      }, 1000);
    };
    tick(job);
  }

  async function load(epoch) {
    build();
    if (v.epoch !== epoch) {
      // A new session: nothing of the last one's is shown.
      v.epoch = epoch;
      clearTimeout(v.timer);
      v.watching = null;
      v.pending = null;
      show($('jobs-confirm'), false);
      show($('jobs-job'), false);
    }
    const write = may('endpoints:write');
    for (const id of ['cancel-h', 'cancel-hint', 'cancel-form']) show($(id), write);
    // A replay since a time sends delivered deliveries again: it needs
    // deliveries:replay (the API answers 403 without it).
    const replay = may('deliveries:replay');
    for (const id of ['since-h', 'since-hint', 'since-form']) show($(id), replay);
    await fillEndpoints();
  }

  return { load };
}
