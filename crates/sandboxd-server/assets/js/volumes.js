// The Sessions tab's volumes card: the volumes the token may see, with their size, use and
// the open sessions that mount them. Volumes are made and mounted through the API, the
// command line or MCP; the card follows every change the page makes and its Refresh button.

import { api } from './api.js';
import { byId, fill, h, setText, show } from './dom.js';
import * as fmt from './format.js';
import { errorText } from './sessions.js';
import { store } from './store.js';

export class VolumesView {
  mount() {
    const card = byId('volumes-card');
    this.ui = {
      body: h('tbody', { id: 'volumes-rows' }),
      refresh: h('button', { type: 'button', class: 'btn btn-ghost', onclick: () => this.refresh() }, 'Refresh'),
      error: h('p', { id: 'volumes-error', class: 'alert alert-error', role: 'alert', hidden: true }),
      empty: h('p', { id: 'volumes-empty', class: 'muted', hidden: true }, 'No volumes yet: `sandboxd volumes create NAME SIZE` makes one.'),
    };
    const head = h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...['Volume', 'Tenant', 'Size', 'Used', 'Mounted by'].map((title) => h('th', { scope: 'col' }, title)),
      ),
    );
    this.ui.table = h('table', { class: 'table', id: 'volumes-table', hidden: true }, head, this.ui.body);
    card.append(
      h('header', { class: 'card-head' }, h('h2', { id: 'volumes-title' }, 'Volumes'), h('span', { class: 'card-sub' }, 'storage shared between sessions'), this.ui.refresh),
      h('div', { class: 'table-wrap' }, this.ui.table),
      this.ui.empty,
      this.ui.error,
    );
    window.addEventListener('sandboxd:changed', () => this.refresh());
    const first = store.on('sessions', () => {
      first();
      this.refresh();
    });
  }

  async refresh() {
    try {
      const { volumes } = await api.get('/v1/volumes');
      show(this.ui.error, false);
      fill(
        this.ui.body,
        volumes.map((v) =>
          h(
            'tr',
            {},
            h('td', {}, v.name),
            h('td', {}, v.tenant || '—'),
            h('td', { class: 'num' }, fmt.bytes(v.size_bytes)),
            h('td', { class: 'num' }, v.used_bytes == null ? '—' : fmt.bytes(v.used_bytes)),
            h('td', {}, v.sessions.length ? v.sessions.map(fmt.shortId).join(', ') : '—'),
          ),
        ),
      );
      show(this.ui.table, volumes.length > 0);
      show(this.ui.empty, volumes.length === 0);
    } catch (error) {
      setText(this.ui.error, errorText(error));
      show(this.ui.error);
    }
  }
}
