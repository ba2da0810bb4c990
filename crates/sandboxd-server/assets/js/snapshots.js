// The Sessions tab's snapshot picker: the snapshots the token may see, and a session opened
// from the one picked (its runtime, labels, environment and files; no processes), or the one
// picked deleted. The list follows every change the page makes and the Refresh button.

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
      select: h('select', { id: 'snapshot-pick', name: 'snapshot', 'aria-label': 'Snapshot' }),
      openButton: h('button', { type: 'button', id: 'snapshot-open', class: 'btn btn-primary', onclick: () => this.openSession() }, 'Open session from snapshot'),
      refresh: h('button', { type: 'button', class: 'btn btn-ghost', onclick: () => this.refresh() }, 'Refresh'),
      detail: h('p', { id: 'snapshot-detail', class: 'create-note' }),
      error: h('p', { id: 'snapshot-error', class: 'alert alert-error', role: 'alert', hidden: true }),
      empty: h('p', { id: 'snapshots-empty', class: 'muted', hidden: true }, 'No snapshots yet: the Snapshot button of a session saves one.'),
    };
    this.ui.deleteButton = confirmButton('Delete', 'Really delete?', () => this.deleteSnapshot(), { id: 'snapshot-delete' });
    this.ui.form = h(
      'div',
      { class: 'create' },
      h('label', { class: 'field field-inline' }, h('span', { class: 'field-label' }, 'Snapshot'), this.ui.select),
      this.ui.openButton,
      h('div', { class: 'snapshot-actions' }, this.ui.deleteButton, this.ui.refresh),
      this.ui.detail,
      this.ui.error,
    );
    card.append(
      h('header', { class: 'card-head' }, h('h2', { id: 'snapshots-title' }, 'Snapshots'), h('span', { class: 'card-sub' }, 'open a session from a saved state')),
      this.ui.form,
      this.ui.empty,
    );
    this.ui.select.addEventListener('change', () => this.renderDetail());
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
    const previous = this.ui.select.value;
    const newest = [...this.snapshots].sort((a, b) => b.created_at.localeCompare(a.created_at));
    fill(
      this.ui.select,
      newest.map((s) => h('option', { value: s.id }, `${s.name} · ${s.runtime} · ${fmt.bytes(s.bytes)} · ${fmt.when(s.created_at)}`)),
    );
    if (newest.some((s) => s.id === previous)) this.ui.select.value = previous;
    const none = newest.length === 0;
    show(this.ui.form, !none);
    show(this.ui.empty, none);
    this.renderDetail();
  }

  selected() {
    return this.snapshots.find((s) => s.id === this.ui.select.value);
  }

  renderDetail() {
    const snapshot = this.selected();
    if (!snapshot) return setText(this.ui.detail, '');
    const tenant = snapshot.tenant ? ` · tenant ${snapshot.tenant}` : '';
    setText(
      this.ui.detail,
      `${snapshot.id} · from session ${fmt.shortId(snapshot.session_id)}${tenant} · holds ${snapshot.paths.join(', ')}. A session opened from it gets its files, labels and environment, not its processes.`,
    );
  }

  async openSession() {
    const snapshot = this.selected();
    if (!snapshot) return;
    this.ui.openButton.disabled = true;
    show(this.ui.error, false);
    setText(this.ui.openButton, 'Opening…');
    try {
      const session = await api.post('/v1/sessions', { snapshot: snapshot.id });
      window.dispatchEvent(new Event('sandboxd:changed'));
      this.open(session.id);
    } catch (error) {
      this.fail(error);
    } finally {
      this.ui.openButton.disabled = false;
      setText(this.ui.openButton, 'Open session from snapshot');
    }
  }

  async deleteSnapshot() {
    const snapshot = this.selected();
    if (!snapshot) return;
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
