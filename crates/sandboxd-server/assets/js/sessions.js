// The Sessions tab: the four live figures, the open sessions, and the form to open one.

import { api, sessionPath, ApiError } from './api.js';
import { byId, confirmButton, fill, h, setText, show } from './dom.js';
import * as fmt from './format.js';
import { store } from './store.js';

export class SessionsView {
  constructor({ open }) {
    this.open = open;
    this.visible = false;
  }

  mount() {
    this.ui = {
      sessions: byId('stat-sessions'),
      sessionsCaption: byId('stat-sessions-caption'),
      memory: byId('stat-memory'),
      processes: byId('stat-processes'),
      runtimes: byId('stat-runtimes'),
      body: byId('sessions-body'),
      table: byId('sessions-table'),
      empty: byId('sessions-empty'),
      updated: byId('sessions-updated'),
      form: byId('create-form'),
      runtime: byId('create-runtime'),
      tenant: byId('create-tenant'),
      submit: byId('create-submit'),
      limits: byId('create-limits'),
      error: byId('create-error'),
    };
    store.on('stats', (stats) => this.renderStats(stats));
    store.on('sessions', (list) => this.renderSessions(list));
    store.on('runtimes', (runtimes) => this.renderRuntimeChoice(runtimes));
    this.ui.runtime.addEventListener('change', () => this.renderLimits());
    this.ui.form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.create();
    });
  }

  setVisible(visible) {
    this.visible = visible;
  }

  renderStats(stats) {
    if (!stats) return;
    setText(this.ui.sessions, fmt.count(stats.sessions));
    const pooled = stats.pooled ? ` · ${fmt.count(stats.pooled)} warm` : '';
    setText(this.ui.sessionsCaption, `of ${fmt.count(stats.max_sessions)} at most${pooled}`);
    setText(this.ui.memory, fmt.bytes(stats.memory_bytes));
    setText(this.ui.processes, fmt.count(stats.processes));
    setText(this.ui.runtimes, fmt.count(stats.runtimes_allowed));
  }

  renderRuntimeChoice(list) {
    const select = this.ui.runtime;
    const previous = select.value;
    fill(
      select,
      list.runtimes.map((runtime) =>
        h(
          'option',
          { value: runtime.name },
          runtime.name === list.default_runtime ? `${runtime.name} (default)` : runtime.name,
        ),
      ),
    );
    const names = list.runtimes.map((r) => r.name);
    select.value = names.includes(previous) ? previous : list.default_runtime;
    this.renderLimits();
  }

  renderLimits() {
    const runtime = store.runtime(this.ui.runtime.value);
    let text = fmt.limits(runtime);
    if (runtime && !runtime.image && runtime.recipe) text += ` · built from the recipe ${runtime.recipe}`;
    if (runtime && runtime.state === 'not_built') text += ' · its image is not on the engine yet: the first session waits for it';
    if (runtime && runtime.state === 'building') text += ' · its image is being built: a session waits for it';
    setText(this.ui.limits, text);
  }

  renderSessions(list) {
    if (!list) return;
    const rows = list
      .slice()
      .sort((a, b) => String(b.created_at).localeCompare(String(a.created_at)))
      .map((session) => this.row(session));
    fill(this.ui.body, rows);
    show(this.ui.table, rows.length > 0);
    show(this.ui.empty, rows.length === 0);
    setText(this.ui.updated, `${rows.length} open · updated ${fmt.when(new Date().toISOString())}`);
  }

  row(session) {
    const runtime = store.runtime(session.runtime);
    const openIt = () => this.open(session.id);
    const memory = runtime
      ? meter(session.memory_bytes, runtime.mem_limit_bytes, `${fmt.bytes(session.memory_bytes)} of ${fmt.bytes(runtime.mem_limit_bytes)}`)
      : fmt.bytes(session.memory_bytes);
    const pids = runtime ? `${fmt.count(session.process_count)} / ${fmt.count(runtime.pids_limit)}` : fmt.count(session.process_count);
    return h(
      'tr',
      { dataset: { session: session.id }, class: 'clickable', ondblclick: openIt },
      h('td', null, h('a', { class: 'mono id-link', href: `#session/${encodeURIComponent(session.id)}`, title: session.id }, fmt.shortId(session.id))),
      h('td', null, h('span', { class: 'pill' }, session.runtime)),
      h('td', { class: session.tenant ? 'tenant' : 'muted' }, session.tenant || '—'),
      h('td', null, stateBadge(session.state)),
      h('td', { class: 'num' }, fmt.seconds(session.idle_secs)),
      h('td', { class: 'num' }, memory),
      h('td', { class: 'num' }, pids),
      h(
        'td',
        { class: 'actions' },
        h('button', { type: 'button', class: 'btn btn-small', onclick: openIt }, 'Open'),
        confirmButton('Close', 'Really close?', () => this.close(session.id), { 'aria-label': `Close session ${session.id}` }),
      ),
    );
  }

  async create() {
    const runtime = this.ui.runtime.value;
    const tenant = this.ui.tenant.value.trim();
    const body = { runtime };
    if (tenant) body.tenant = tenant;
    this.ui.submit.disabled = true;
    show(this.ui.error, false);
    setText(this.ui.submit, 'Opening…');
    try {
      const session = await api.post('/v1/sessions', body);
      this.ui.tenant.value = '';
      window.dispatchEvent(new Event('sandboxd:changed'));
      this.open(session.id);
    } catch (error) {
      setText(this.ui.error, errorText(error));
      show(this.ui.error);
    } finally {
      this.ui.submit.disabled = false;
      setText(this.ui.submit, 'Open session');
    }
  }

  async close(id) {
    try {
      await api.delete(sessionPath(id));
    } catch (error) {
      setText(this.ui.error, errorText(error));
      show(this.ui.error);
    }
    window.dispatchEvent(new Event('sandboxd:changed'));
  }
}

export function stateBadge(state) {
  return h('span', { class: `badge badge-${state}` }, h('span', { class: 'badge-dot' }), state);
}

/** A figure with a thin bar under it showing how much of a ceiling it uses. */
export function meter(value, max, title) {
  const ratio = max ? Math.min(1, Number(value) / Number(max)) : 0;
  const bar = h('span', { class: 'meter-fill' });
  bar.style.width = `${(ratio * 100).toFixed(1)}%`;
  if (ratio > 0.85) bar.classList.add('high');
  return h('span', { class: 'meter', title }, h('span', { class: 'meter-text' }, fmt.bytes(value)), h('span', { class: 'meter-bar' }, bar));
}

export function errorText(error) {
  if (error instanceof ApiError) {
    return error.status ? `${error.message} (${error.code})` : error.message;
  }
  return String(error && error.message ? error.message : error);
}

