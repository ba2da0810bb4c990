// The Sessions tab's snapshots: a table of those the token may see (name, the session it was
// taken from, runtime, size, when), each with a session opened from it (its runtime, labels,
// environment and files; no processes) or deleted. The list follows every change the page
// makes and the Refresh button.

import { api } from './api.js';
import { byId, confirmButton, fill, h, setText, show } from './dom.js';
import * as fmt from './format.js';
import { errorText } from './sessions.js';
import { store } from './store.js';

export class SnapshotsView {
  constructor({ open }) {
    this.open = open;
    this.snapshots = [];
    this.loading = null;
  }

  mount() {
    const card = byId('snapshots-card');
    this.ui = {
      body: h('tbody', { id: 'snapshots-body' }),
      refresh: h('button', { type: 'button', class: 'btn btn-ghost btn-small', onclick: () => this.refresh() }, 'Refresh'),
      error: h('p', { id: 'snapshot-error', class: 'alert alert-error', role: 'alert', hidden: true }),
      empty: h('p', { id: 'snapshots-empty', class: 'muted', hidden: true }, 'No snapshots yet: the Snapshot button of a session saves one, under a name you give.'),
    };
    const column = (label, className) => h('th', { scope: 'col', class: className || null }, label);
    this.ui.table = h(
      'div',
      { class: 'table-wrap', 'data-scroll-hint': 'Snapshots' },
      h(
        'table',
        { class: 'table', id: 'snapshots-table' },
        h(
          'thead',
          null,
          h('tr', null, column('Name'), column('Source session'), column('Runtime'), column('Size', 'num'), column('Created'), column('Actions', 'actions-col')),
        ),
        this.ui.body,
      ),
    );
    card.append(
      h(
        'header',
        { class: 'card-head' },
        h('h2', { id: 'snapshots-title' }, 'Snapshots'),
        h('span', { class: 'card-sub' }, 'a session opened from one gets its files, labels and environment, not its processes'),
        this.ui.refresh,
      ),
      this.ui.error,
      this.ui.table,
      this.ui.empty,
    );
    window.addEventListener('sandboxd:changed', () => this.refresh());
    // The first listing after signing in.
    const first = store.on('sessions', () => {
      first();
      this.refresh();
    });
  }

  async refresh() {
    if (this.loading) return this.loading;
    this.loading = (async () => {
      try {
        this.snapshots = (await api.get('/v1/snapshots')).snapshots;
        show(this.ui.error, false);
      } catch (error) {
        this.fail(error);
      } finally {
        this.loading = null;
      }
      this.render();
    })();
    return this.loading;
  }

  render() {
    const newest = [...this.snapshots].sort((a, b) => b.created_at.localeCompare(a.created_at));
    fill(this.ui.body, newest.map((snapshot) => this.row(snapshot)));
    const none = newest.length === 0;
    show(this.ui.table, !none);
    show(this.ui.empty, none);
  }

  row(snapshot) {
    const openButton = h('button', { type: 'button', class: 'btn btn-small btn-primary snapshot-open' }, 'Open session');
    openButton.addEventListener('click', () => this.openSession(snapshot, openButton));
    const tenant = snapshot.tenant ? h('div', { class: 'muted' }, `tenant ${snapshot.tenant}`) : null;
    return h(
      'tr',
      { dataset: { snapshot: snapshot.id } },
      h('th', { scope: 'row', class: 'wrap' }, h('span', { class: 'snapshot-name' }, snapshot.name), h('div', { class: 'mono muted snapshot-id', title: `holds ${snapshot.paths.join(', ')}` }, snapshot.id), tenant),
      h('td', null, h('a', { class: 'mono id-link', href: `#session/${encodeURIComponent(snapshot.session_id)}`, title: snapshot.session_id }, fmt.shortId(snapshot.session_id))),
      h('td', null, h('span', { class: 'pill' }, snapshot.runtime)),
      h('td', { class: 'num' }, fmt.bytes(snapshot.bytes)),
      h('td', { class: 'nowrap', title: snapshot.created_at }, fmt.dateTime(snapshot.created_at)),
      h(
        'td',
        { class: 'actions' },
        openButton,
        confirmButton('Delete', 'Really delete?', () => this.deleteSnapshot(snapshot), { class: 'btn btn-small btn-danger-ghost snapshot-delete', 'aria-label': `Delete snapshot ${snapshot.name}` }),
      ),
    );
  }

  async openSession(snapshot, button) {
    button.disabled = true;
    show(this.ui.error, false);
    setText(button, 'Opening…');
    try {
      const session = await api.post('/v1/sessions', { snapshot: snapshot.id });
      window.dispatchEvent(new Event('sandboxd:changed'));
      this.open(session.id);
    } catch (error) {
      this.fail(error);
    } finally {
      button.disabled = false;
      setText(button, 'Open session');
    }
  }

  async deleteSnapshot(snapshot) {
    try {
      await api.delete(`/v1/snapshots/${encodeURIComponent(snapshot.id)}`);
    } catch (error) {
      this.fail(error);
    }
    await this.refresh();
  }

  fail(error) {
    setText(this.ui.error, errorText(error));
    show(this.ui.error);
  }
}
