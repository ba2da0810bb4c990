// The session's activity log: every operation on the sandbox, newest first.

import { api, sessionPath } from './api.js';
import { h, scrollHint, setText, show } from './dom.js';
import * as fmt from './format.js';
import { errorText } from './sessions.js';
import { Poller } from './poll.js';

export class ActivityView {
  constructor(id) {
    this.id = id;
    this.active = false;
    this.poller = new Poller(() => this.refresh());
    this.onActivity = (event) => {
      if (event.detail && event.detail.session === this.id && this.active) this.refresh();
    };
    window.addEventListener('sandboxd:activity', this.onActivity);
  }

  mount(pane) {
    this.body = h('tbody');
    this.table = h(
      'table',
      { class: 'table activity-table' },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          ['When', 'Who', 'Action', 'Target', 'Outcome', 'Exit', 'Bytes', 'Took'].map((label, i) =>
            h('th', { scope: 'col', class: i >= 5 ? 'num' : null }, label),
          ),
        ),
      ),
      this.body,
    );
    this.empty = h('div', { class: 'empty empty-small', hidden: true }, h('p', { class: 'empty-title' }, 'Nothing recorded yet.'));
    this.error = h('p', { class: 'alert alert-error', role: 'alert', hidden: true });
    this.updated = h('span', { class: 'card-sub' });
    this.wrap = h('div', { class: 'table-wrap' }, this.table);
    pane.append(
      h(
        'section',
        { class: 'card', 'aria-label': 'Activity' },
        h('header', { class: 'card-head' }, h('h3', null, 'Activity'), this.updated),
        h(
          'p',
          { class: 'prose' },
          'Every operation on this sandbox, an agent\'s included. Payloads are never recorded — only what was addressed and how it went. The service keeps the most recent 200 entries per session.',
        ),
        this.error,
        this.wrap,
        this.empty,
      ),
    );
    scrollHint(this.wrap);
  }

  setActive(active) {
    this.active = active;
    this.poller.set(active);
  }

  async refresh() {
    try {
      const { entries } = await api.get(sessionPath(this.id, '/activity'));
      show(this.error, false);
      this.render(entries);
    } catch (error) {
      setText(this.error, errorText(error));
      show(this.error);
    }
  }

  render(entries) {
    // Rebuilt only when the log changed, so a selection or a focused row holds still.
    const key = `${entries.length} ${entries[0]?.at} ${entries[0]?.action} ${entries[0]?.status}`;
    setText(this.updated, `${entries.length} of at most 200 · updated ${fmt.when(new Date().toISOString())}`);
    if (key === this.shown) return;
    this.shown = key;
    this.body.replaceChildren(
      ...entries.map((e) =>
        h(
          'tr',
          { class: e.status === 'error' ? 'row-error' : null, dataset: { action: e.action, interface: e.interface, status: e.status } },
          h('td', { class: 'nowrap', title: e.at }, fmt.when(e.at)),
          h('td', null, h('span', { class: 'who' }, e.principal), h('span', { class: `iface iface-${safeClass(e.interface)}` }, e.interface)),
          h('td', null, h('span', { class: 'action' }, e.action)),
          h('td', { class: 'mono target' }, e.target || '—'),
          h(
            'td',
            null,
            h('span', { class: `outcome outcome-${['ok', 'interrupted'].includes(e.status) ? safeClass(e.status) : 'error'}` }, e.status),
            e.error ? h('span', { class: 'outcome-error' }, e.error) : null,
          ),
          h('td', { class: 'num' }, e.exit_code === undefined || e.exit_code === null ? '—' : String(e.exit_code)),
          h('td', { class: 'num' }, e.bytes === undefined || e.bytes === null ? '—' : fmt.bytes(e.bytes)),
          h('td', { class: 'num' }, fmt.millis(e.duration_ms)),
        ),
      ),
    );
    show(this.table, entries.length > 0);
    show(this.empty, entries.length === 0);
  }

  dispose() {
    this.setActive(false);
    window.removeEventListener('sandboxd:activity', this.onActivity);
  }
}

function safeClass(text) {
  return String(text).replace(/[^a-z0-9-]/gi, '');
}
