// The Sessions tab: the four live figures, the open sessions, and the form to open one.

import { api, sessionPath, ApiError } from './api.js';
import { byId, confirmButton, fill, h, setText, show } from './dom.js';
import * as fmt from './format.js';
import { store } from './store.js';

export class SessionsView {
  constructor({ open }) {
    this.open = open;
    this.visible = false;
    this.rows = new Map(); // session id -> its row's elements
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
      description: byId('create-description'),
      error: byId('create-error'),
      build: byId('create-build'),
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
          { value: runtime.name, title: runtime.description || null },
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
    const description = (runtime && runtime.description) || '';
    setText(this.ui.description, description);
    show(this.ui.description, Boolean(description));
  }

  /**
   * Updates the table in place, one row per session id: a row that stays keeps its elements
   * (an armed Close button, focus, selected text), only its figures change. A session that
   * ended stays as ended, with why, until it is dismissed.
   */
  renderSessions(list) {
    if (!list) return;
    const listed = new Set(list.map((s) => s.id));
    for (const session of list) this.upsert(session);
    for (const [id, row] of this.rows) {
      if (!listed.has(id) && row.state !== 'ended') this.markEnded(id, store.endReasons.get(id));
    }
    this.order();
    const open = list.length;
    const ended = this.rows.size - open;
    show(this.ui.table, this.rows.size > 0);
    show(this.ui.empty, this.rows.size === 0);
    setText(this.ui.updated, `${open} open${ended ? ` · ${ended} ended` : ''} · updated ${fmt.when(new Date().toISOString())}`);
    this.ui.table.closest('.table-wrap')?.dispatchEvent(new Event('sandboxd:resized'));
  }

  /** A session known to have ended (from the events), shown at once. */
  ended(id, reason) {
    if (!this.rows.has(id)) return;
    this.markEnded(id, reason);
    show(this.ui.table, true);
  }

  upsert(session) {
    let row = this.rows.get(session.id);
    if (!row) {
      row = this.row(session);
      this.rows.set(session.id, row);
    }
    row.created = String(session.created_at);
    const runtime = store.runtime(session.runtime);
    // The tier as the activity log's open entry names it: "ALIAS (gvisor)"; runc is the default.
    setText(row.runtime, runtime && runtime.isolation === 'gvisor' ? `${session.runtime} (gvisor)` : session.runtime);
    setText(row.tenant, session.tenant || '—');
    row.tenant.className = session.tenant ? 'tenant' : 'muted';
    renderLabels(row.labels, session.labels);
    setText(row.createdAt, fmt.when(session.created_at));
    row.createdAt.title = String(session.created_at);
    setState(row, session.state, session.end_reason, session.paused_memory);
    setText(row.idle, session.state === 'running' ? fmt.seconds(session.idle_secs) : '—');
    updateMeter(row.memory, session.memory_bytes, fmt.memoryCeiling(session, runtime));
    setText(row.pids, runtime ? `${fmt.count(session.process_count)} / ${fmt.count(runtime.pids_limit)}` : fmt.count(session.process_count));
  }

  markEnded(id, reason) {
    const row = this.rows.get(id);
    setState(row, 'ended', reason);
    setText(row.idle, '—');
    updateMeter(row.memory, null, null);
    setText(row.pids, '—');
  }

  order() {
    const rows = [...this.rows.values()].sort((a, b) => b.created.localeCompare(a.created));
    rows.forEach((row, index) => {
      if (this.ui.body.children[index] !== row.element) this.ui.body.insertBefore(row.element, this.ui.body.children[index] || null);
    });
  }

  row(session) {
    const id = session.id;
    const openIt = () => this.open(id);
    const row = {
      state: null,
      runtime: h('span', { class: 'pill' }),
      tenant: h('td'),
      labels: h('td', { class: 'labels' }),
      createdAt: h('td', { class: 'nowrap created' }),
      badge: h('span'),
      reason: h('span', { class: 'end-reason', hidden: true }),
      idle: h('td', { class: 'num' }),
      memory: h('td', { class: 'num' }),
      pids: h('td', { class: 'num' }),
      openButton: h('button', { type: 'button', class: 'btn btn-small', onclick: openIt }, 'Open'),
      closeButton: confirmButton('Close', 'Really close?', () => this.close(id), { 'aria-label': `Close session ${id}` }),
      dismissButton: h('button', { type: 'button', class: 'btn btn-small btn-ghost', hidden: true, 'aria-label': `Dismiss session ${id}`, onclick: () => this.dismiss(id) }, 'Dismiss'),
    };
    row.element = h(
      'tr',
      { dataset: { session: id }, class: 'clickable', ondblclick: openIt },
      h('td', null, h('a', { class: 'mono id-link', href: `#session/${encodeURIComponent(id)}`, title: id }, fmt.shortId(id))),
      h('td', null, row.runtime),
      row.tenant,
      row.labels,
      row.createdAt,
      h('td', null, h('div', { class: 'state-cell' }, row.badge, row.reason)),
      row.idle,
      row.memory,
      row.pids,
      h('td', { class: 'actions' }, row.openButton, row.closeButton, row.dismissButton),
    );
    return row;
  }

  dismiss(id) {
    const row = this.rows.get(id);
    if (!row) return;
    row.element.remove();
    this.rows.delete(id);
    store.endReasons.delete(id);
    this.renderSessions(store.sessions || []);
  }

  async create() {
    const runtime = this.ui.runtime.value;
    const tenant = this.ui.tenant.value.trim();
    const body = { runtime };
    if (tenant) body.tenant = tenant;
    this.ui.submit.disabled = true;
    show(this.ui.error, false);
    setText(this.ui.submit, 'Opening…');
    const progress = this.followBuild(runtime);
    try {
      const session = await api.post('/v1/sessions', body);
      this.ui.tenant.value = '';
      window.dispatchEvent(new Event('sandboxd:changed'));
      this.open(session.id);
    } catch (error) {
      setText(this.ui.error, errorText(error));
      show(this.ui.error);
    } finally {
      progress.stop();
      this.ui.submit.disabled = false;
      setText(this.ui.submit, 'Open session');
      // The runtime's image may have been built meanwhile.
      window.dispatchEvent(new Event('sandboxd:runtimes'));
    }
  }

  /**
   * While a session waits for its runtime's image, shows where the build is (step n of m,
   * its last line), read from the runtimes list twice a second.
   */
  followBuild(name) {
    let stopped = false;
    let timer = null;
    const poll = async () => {
      try {
        const list = await api.get('/v1/runtimes');
        if (stopped) return;
        const runtime = list.runtimes.find((r) => r.name === name);
        if (runtime && runtime.state === 'building') {
          setText(this.ui.build, buildText(runtime.progress));
          show(this.ui.build);
          store.set('runtimes', list);
        }
      } catch {
        // the create's own answer says what went wrong
      }
      if (!stopped) timer = setTimeout(poll, 500);
    };
    timer = setTimeout(poll, 300);
    return {
      stop: () => {
        stopped = true;
        clearTimeout(timer);
        show(this.ui.build, false);
      },
    };
  }

  async close(id) {
    try {
      await api.delete(sessionPath(id));
      store.endReasons.set(id, 'closed by the client');
    } catch (error) {
      setText(this.ui.error, errorText(error));
      show(this.ui.error);
    }
    window.dispatchEvent(new Event('sandboxd:changed'));
  }
}

/** An image build's progress in words: "Building its image: step 3 of 7 · RUN pip install …". */
export function buildText(progress) {
  const p = progress || {};
  const step = p.step && p.steps ? `step ${p.step} of ${p.steps}` : 'starting';
  return `Building the runtime's image (a session waits for it): ${step}${p.line ? ` · ${p.line}` : ''}`;
}

/** A session's labels as `key=value` chips (text only: they are a client's), or a dash. */
function renderLabels(cell, labels) {
  const pairs = Object.entries(labels || {});
  const key = JSON.stringify(pairs);
  if (cell.shownLabels === key) return;
  cell.shownLabels = key;
  if (!pairs.length) {
    fill(cell, h('span', { class: 'muted' }, '—'));
    return;
  }
  fill(cell, pairs.map(([name, value]) => h('span', { class: 'label-chip', title: `${name}=${value}` }, `${name}=${value}`)));
}

function setState(row, state, reason, pausedMemory) {
  if (row.state !== state || row.pausedMemory !== pausedMemory) {
    row.state = state;
    row.pausedMemory = pausedMemory;
    row.badge.replaceChildren(stateBadge(state, pausedMemory));
    const ended = state === 'ended';
    row.closeButton.hidden = ended;
    row.openButton.hidden = false;
    row.dismissButton.hidden = !ended;
    row.element.classList.toggle('row-ended', ended);
  }
  setText(row.reason, state === 'ended' && reason ? reason : '');
  row.reason.hidden = !(state === 'ended' && reason);
}

function updateMeter(cell, value, max) {
  if (value === null || value === undefined) {
    cell.replaceChildren('—');
    return;
  }
  let bar = cell.querySelector('.meter');
  if (!max) {
    setText(cell, fmt.bytes(value));
    return;
  }
  if (!bar) {
    bar = meter(value, max, '');
    cell.replaceChildren(bar);
  }
  const ratio = Math.min(1, Number(value) / Number(max));
  const filled = bar.querySelector('.meter-fill');
  filled.style.width = `${(ratio * 100).toFixed(1)}%`;
  filled.classList.toggle('high', ratio > 0.85);
  setText(bar.querySelector('.meter-text'), fmt.bytes(value));
  bar.title = `${fmt.bytes(value)} of ${fmt.bytes(max)}`;
}

/** A session's state; a paused one says where its memory is: "paused (on disk)". */
export function stateBadge(state, pausedMemory) {
  const where = { disk: ' (on disk)', ram: ' (in memory)' }[pausedMemory] || '';
  const label = state === 'paused' ? `paused${where}` : state;
  return h('span', { class: `badge badge-${state}` }, h('span', { class: 'badge-dot' }), label);
}

/** A figure with a thin bar under it showing how much of a ceiling it uses. */
export function meter(value, max, title) {
  const ratio = max ? Math.min(1, Number(value) / Number(max)) : 0;
  const bar = h('span', { class: 'meter-fill' });
  bar.style.width = `${(ratio * 100).toFixed(1)}%`;
  if (ratio > 0.85) bar.classList.add('high');
  return h('span', { class: 'meter', title }, h('span', { class: 'meter-text' }, fmt.bytes(value)), h('span', { class: 'meter-bar' }, bar));
}

/** What the page says to do, by the service's remedy key, in the page's own words. */
const REMEDIES = {
  open_session: 'Open a new session on the Sessions tab.',
  list_sessions: 'The Sessions tab lists the open ones.',
  close_session: 'Close one you no longer need on the Sessions tab, or try again later.',
  list_runtimes: 'The form offers the runtimes you may use; the Runtimes tab shows their limits.',
  list_processes: 'The terminal shows what runs.',
  kill_all: 'Kill processes (in the session header) ends them all; the session and its files stay.',
  list_directory: 'Open it as a folder in the Files tab.',
  read_file: 'Open it as a file in the Files tab.',
  read_part: 'Read a part of it in the terminal (e.g. head -c, tail).',
  delete_recursively: 'Delete it from the Files tab, which asks before it deletes a folder and all in it.',
};

/**
 * An error as the page shows it: the service's message without what only a REST client can
 * use (its remedy worded as a route to call) or what means nothing here (an OS error
 * number), and what to do in the page's own words.
 */
export function errorText(error) {
  if (error instanceof ApiError) {
    let message = error.message;
    const remedy = REMEDIES[error.remedy];
    // The service appends a remedy's REST wording after "; ".
    if (error.remedy && message.includes('; ')) message = message.slice(0, message.lastIndexOf('; '));
    message = plainMessage(message);
    const text = remedy ? `${message.replace(/[.;:,\s]+$/, '')}. ${remedy}` : message;
    return error.status ? `${text} (${error.code})` : text;
  }
  return plainMessage(String(error && error.message ? error.message : error));
}

const ROUTE = /\b(GET|POST|PUT|DELETE|PATCH) \/v1\//;

export function plainMessage(text) {
  return String(text)
    .replace(/\s*\(os error \d+\)/g, '')
    .replace(/\s*\([^()]*\b(GET|POST|PUT|DELETE|PATCH) \/v1\/[^()]*\)/g, '')
    .split(/;\s+/)
    .filter((part) => !ROUTE.test(part))
    .join('; ');
}
