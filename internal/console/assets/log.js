// hookline console: the Messages view (the message log and the search of
// deliveries) and the event it opens. An ES2020 module, imported by app.js,
// which hands it its helpers (messagesView(ui)). Rules as app.js's (held by
// console_test.go): API data is rendered as text only, never parsed as
// HTML; no URL from data goes into a link or a source.

// Under a filter the events listing cannot take (endpoint, state, status),
// the view lists the deliveries that match (GET /v1/deliveries), each with
// its event; without one, the events (GET /v1/events) with their
// deliveries' states.
const PAGE = 20;

export function messagesView(ui) {
  const { $, el, api, cell, wordsCell, tokens, button, clear, show, txt, time, query, enc, parseTime, openDelivery, fillEndpointChoices } = ui;
  const view = { filter: {}, deliveries: false, pager: null, eventId: null };

  function readFilter() {
    const status = $('messages-status').value.trim().toLowerCase();
    const f = {
      event_type: $('messages-type').value.trim() || undefined,
      endpoint_id: $('messages-endpoint').value.trim() || undefined,
      state: $('messages-state').value || undefined,
      since: parseTime($('messages-since').value, 'Since'),
      until: parseTime($('messages-until').value, 'Until'),
    };
    if (/^\d+$/.test(status)) f.status = status;
    else if (status) f.status_class = status;
    return f;
  }

  function heads(names) {
    const tr = $('messages-head');
    clear(tr);
    for (const h of names) tr.append(el('th', { scope: 'col', text: h }));
  }

  // states shows an event's deliveries, one badge each.
  function states(ds) {
    if (!ds.length) return el('span', { class: 'hint', text: 'no delivery attempted yet' });
    const box = el('span', { class: 'states' });
    for (const d of ds) {
      const last = d.last_status ? ' ' + d.last_status : '';
      box.append(el('span', { class: 'state state-' + String(d.state), 'data-test': 'message-state', 'data-state': d.state,
        text: txt(d.endpoint_id) + ': ' + txt(d.state) + last }));
    }
    return box;
  }

  function eventRow(e) {
    const open = button(e.id, 'message-open', () => openEvent(e.id), { class: 'link' });
    const ds = Array.isArray(e.deliveries) ? e.deliveries : [];
    return el('tr', { 'data-test': 'message-row', 'data-id': e.id },
      cell(time(e.occurred_at), 'Occurred'), wordsCell(tokens([txt(e.type)]), 'Type', 'message-row-type'), cell(open, 'Event'), cell(states(ds), 'Deliveries'));
  }

  function deliveryRow(d) {
    const open = button(d.event_id, 'message-open', () => openEvent(d.event_id), { class: 'link' });
    const detail = button(d.id, 'message-delivery-open', () => openDelivery(d.id), { class: 'link' });
    const last = d.last_status ? String(d.last_status) + (d.last_error ? ' (' + d.last_error + ')' : '') : txt(d.last_error);
    return el('tr', { 'data-test': 'message-row', 'data-id': d.event_id, 'data-delivery': d.id },
      cell(time(d.created_at), 'Created'), wordsCell(tokens([txt(d.event_type)]), 'Type', 'message-row-type'), cell(open, 'Event'), cell(txt(d.endpoint_id), 'Endpoint'),
      cell(el('span', { class: 'state state-' + String(d.state), 'data-test': 'message-state', 'data-state': d.state, text: txt(d.state) }), 'State'),
      cell(last, 'Last answer'), cell(txt(d.attempts), 'Attempts'), cell(detail, 'Delivery'));
  }

  async function load(cursor) {
    fillEndpointChoices().catch(() => {});
    const f = view.filter;
    view.deliveries = Boolean(f.endpoint_id || f.state || f.status || f.status_class);
    let page;
    if (view.deliveries) {
      page = await api('GET', '/v1/deliveries' + query(Object.assign({ limit: PAGE, cursor }, f)));
      heads(['Created (UTC)', 'Type', 'Event', 'Endpoint', 'State', 'Last answer', 'Attempts', 'Delivery']);
    } else {
      page = await api('GET', '/v1/events' + query({ type: f.event_type, since: f.since, until: f.until, limit: PAGE, cursor }));
      heads(['Occurred (UTC)', 'Type', 'Event', 'Deliveries (endpoint: state, last status)']);
    }
    const body = $('messages-body');
    clear(body);
    const list = Array.isArray(page && page.data) ? page.data : [];
    for (const item of list) body.append(view.deliveries ? deliveryRow(item) : eventRow(item));
    const next = page && page.next_cursor;
    show($('messages-empty'), list.length === 0);
    $('messages-empty').textContent = next ? 'Nothing matched on this page: Next reads further.' : 'No messages match.';
    $('messages-mode').textContent = view.deliveries
      ? 'Deliveries that match, newest first (a delivery is listed once attempted).'
      : 'Events, newest first, with their deliveries.';
    return next;
  }

  function openEvent(id) {
    view.eventId = id;
    if (location.hash === '#message') ui.route();
    else location.hash = '#message';
  }

  function fact(dl, k, v, test) {
    dl.append(el('dt', { text: k }), el('dd', test ? { 'data-test': test, text: txt(v) } : { text: txt(v) }));
  }

  async function loadEvent() {
    const id = view.eventId;
    if (!id) {
      location.hash = '#messages';
      return;
    }
    for (const n of ['message-facts', 'message-deliveries-body', 'message-payload']) clear($(n));
    $('message-id').textContent = id;
    const e = await api('GET', '/v1/events/' + enc(id));
    const dl = $('message-facts');
    fact(dl, 'Type', e.type, 'message-type');
    fact(dl, 'Occurred (UTC)', time(e.occurred_at));
    if (e.endpoint_id) fact(dl, 'Addressed to', e.endpoint_id);
    if (e.sequence !== undefined) fact(dl, 'Sequence', e.sequence);
    fact(dl, 'Matched', (e.matched || []).join(', '));
    if ((e.filtered_out || []).length) fact(dl, 'Filtered out', e.filtered_out.join(', '));
    const pre = $('message-payload');
    pre.textContent = 'payload' in e ? JSON.stringify(e.payload, null, 2) : 'The payload is past the retention period and is no longer served.';
    const body = $('message-deliveries-body');
    const ds = Array.isArray(e.deliveries) ? e.deliveries : [];
    if (!ds.length) body.append(el('tr', {}, el('td', { colspan: 5, text: 'No delivery attempted yet.' })));
    for (const d of ds) {
      body.append(el('tr', { 'data-test': 'message-delivery', 'data-id': d.id },
        cell(button(d.id, 'message-delivery-open', () => openDelivery(d.id), { class: 'link' }), 'Delivery'),
        cell(txt(d.endpoint_id), 'Endpoint'), cell(txt(d.state), 'State'), cell(txt(d.attempts), 'Attempts'),
        cell(txt(d.last_status), 'Last status')));
    }
  }

  function wire() {
    view.pager = new ui.Pager('messages', load);
    $('messages-filters').addEventListener('submit', (e) => {
      e.preventDefault();
      ui.act($('messages-apply'), async () => {
        view.filter = readFilter();
        await view.pager.first();
      });
    });
    $('message-back').addEventListener('click', () => history.back());
    $('message-refresh').addEventListener('click', (e) => ui.act(e.currentTarget, loadEvent));
  }

  function wipe() {
    for (const id of ['messages-body', 'message-facts', 'message-deliveries-body', 'message-payload', 'message-id']) clear($(id));
    $('messages-filters').reset();
    view.filter = {};
    view.eventId = null;
  }

  return { wire, wipe, list: () => view.pager.first(), loadEvent, hasEvent: () => view.eventId !== null };
}
