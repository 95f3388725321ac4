// hookline console: the Event types view. The stack's event-type catalog
// (GET /v1/event-types): each type's name, description, whether it is
// deprecated, its validation, its schema and example; and "Send a test
// event" of a type to one of the tenant's endpoints (POST
// /v1/endpoints/{id}/test with {"event_type"}), its example as the payload.
// Same rules as app.js (held by console_test.go): data as text only, no
// URL from data in a link or a source.
'use strict';

const MODES = {
  off: 'not validated',
  warn: 'a payload that does not match is delivered and counted',
  reject: 'a payload that does not match is rejected (schema_mismatch)',
};

// eventTypesView renders the catalog inside #types-view with the helpers
// app.js lends it, and answers what app.js calls: load() when it opens.
export function eventTypesView(ui) {
  const { $, el, clear, show, act, api, may, enc, openDelivery } = ui;
  const json = (v) => {
    try {
      return JSON.stringify(v, null, 2);
    } catch (_) {
      return String(v);
    }
  };

  function block(label, value, test, open) {
    const d = el('details', {}, el('summary', { text: label }), el('pre', { 'data-test': test, tabindex: 0, text: json(value) }));
    d.open = Boolean(open);
    return d;
  }

  function sender(t, pick) {
    const out = el('span', { class: 'sub', 'data-test': 'type-sent', role: 'status' });
    const send = el('button', { type: 'button', 'data-test': 'type-send', text: 'Send a test event' });
    send.addEventListener('click', () => act(send, async () => {
      const ep = pick.value;
      const res = await api('POST', '/v1/endpoints/' + enc(ep) + '/test', { event_type: t.name });
      clear(out);
      const open = el('button', { type: 'button', 'data-test': 'type-open', text: 'Open its delivery' });
      open.addEventListener('click', () => openDelivery(res.delivery_id));
      out.append('Sent ' + String(res.id) + ' to ' + ep + ': delivery ' + String(res.delivery_id) + ' ', open);
    }));
    return el('div', { class: 'bar' }, send, out);
  }

  function card(t, pick) {
    const name = el('h2', { text: String(t.name) });
    const head = el('div', { class: 'bar' }, name);
    if (t.deprecated) head.append(el('span', { class: 'state state-dead', 'data-test': 'type-deprecated', text: 'deprecated' }));
    const mode = String(t.validation || 'off');
    const box = el('article', { class: 'panel', 'data-test': 'type', 'data-name': String(t.name), 'data-validation': mode },
      head,
      el('p', { 'data-test': 'type-description', text: t.description ? String(t.description) : 'No description.' }),
      el('p', { class: 'sub', 'data-test': 'type-validation', text: 'Validation ' + mode + ': ' + (MODES[mode] || '') + '.' }),
      block('Schema', t.schema, 'type-schema', false),
      block('Example', t.example, 'type-example', true));
    if (pick) box.append(sender(t, pick));
    return box;
  }

  // picker is the select of the tenant's endpoints the test events go
  // to, or null when the credential may not send one or has none.
  async function picker() {
    if (!may('endpoints:write')) return null;
    const page = await api('GET', '/v1/endpoints?limit=100');
    const list = (page && page.data) || [];
    if (!list.length) return null;
    const sel = el('select', { id: 'types-endpoint', 'data-test': 'types-endpoint' });
    for (const ep of list) {
      const o = el('option', { text: (ep.description ? String(ep.description) + ' · ' : '') + String(ep.id) });
      o.value = String(ep.id);
      sel.append(o);
    }
    return sel;
  }

  async function load() {
    const root = $('types-view');
    clear(root);
    // Every page: a catalog has at most 1,000 types (10 pages of 100).
    let v;
    let cursor = '';
    const list = [];
    for (let n = 0; n < 10; n++) {
      v = await api('GET', '/v1/event-types?limit=100' + (cursor ? '&cursor=' + enc(cursor) : ''));
      if (v && Array.isArray(v.data)) list.push(...v.data);
      cursor = v && v.next_cursor;
      if (!cursor) break;
    }
    if (!v || !v.catalog) {
      root.append(el('p', { class: 'hint', 'data-test': 'types-none', text: 'This stack has no event-type catalog: endpoints may subscribe to any event type.' }));
      return;
    }
    root.append(el('p', { class: 'hint', text: 'The event types this stack declares. An endpoint subscribes to these (by name, a prefix such as payment.*, or *); a deprecated type still works, but its producers should stop sending it.' }));
    const pick = await picker();
    if (pick) root.append(el('div', { class: 'bar' }, el('label', { for: 'types-endpoint', text: 'Test events go to' }), pick));
    for (const t of list) root.append(card(t, pick));
    show(root, true);
  }
  return { load };
}
