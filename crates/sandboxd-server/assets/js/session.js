// The Session tab: one session's header, and its terminal with the source pane, interactive
// shell, files, activity log, ports, notebook and network as sub-tabs.

import { api, sessionPath, ApiError } from './api.js';
import { byId, confirmButton, fill, h, icon, setText, show } from './dom.js';
import * as fmt from './format.js';
import { store } from './store.js';
import { stateBadge, errorText } from './sessions.js';
import { TerminalView } from './terminal.js';
import { ShellView } from './shell.js';
import { FilesView } from './files.js';
import { ActivityView } from './activity.js';
import { PortsView } from './ports.js';
import { NotebookView } from './notebook.js';
import { NetworkView } from './network.js';

const REFRESH_MS = 2000;

const SUBTABS = [
  // One command at a time, each with its own output and exit code; a live shell (a PTY).
  ['terminal', 'Commands'],
  ['shell', 'Shell'],
  ['files', 'Files'],
  ['activity', 'Activity'],
  ['ports', 'Ports'],
  ['notebook', 'Notebook'],
  ['network', 'Network'],
];

export class SessionView {
  constructor({ back }) {
    this.back = back;
    this.id = null;
    this.info = null;
    this.visible = false;
    this.subtab = 'terminal';
    this.timer = null;
  }

  mount() {
    this.ui = {
      none: byId('session-none'),
      view: byId('session-view'),
      tabLabel: byId('tab-session-id'),
    };
  }

  /** Shows session `id` (or none), on sub-tab `subtab` when given. */
  select(id, subtab) {
    if (subtab && SUBTABS.some(([key]) => key === subtab)) this.subtab = subtab;
    if (id === this.id) {
      this.showSubtab(this.subtab);
      return;
    }
    this.dispose();
    this.id = id;
    this.info = null;
    setText(this.ui.tabLabel, id ? ` ${fmt.shortId(id).slice(0, 8)}` : '');
    show(this.ui.none, !id);
    show(this.ui.view, Boolean(id));
    this.ui.view.replaceChildren();
    if (!id) return;
    this.build();
    this.load();
  }

  setVisible(visible) {
    this.visible = visible;
    clearInterval(this.timer);
    this.timer = null;
    if (visible && this.id) {
      this.timer = setInterval(() => {
        if (!document.hidden) this.load();
      }, REFRESH_MS);
      this.showSubtab(this.subtab);
    } else {
      for (const view of Object.values(this.views || {})) view.setActive(false);
    }
  }

  build() {
    const id = this.id;
    this.header = {
      runtime: h('span', { class: 'pill' }, '…'),
      tenant: h('span', { class: 'tenant' }),
      state: h('span'),
      created: h('span'),
      idle: h('span'),
      memory: h('span'),
      pids: h('span'),
      ended: h('p', { class: 'alert alert-info', role: 'status', hidden: true }),
      killed: h('p', { class: 'alert alert-info killed', role: 'status', hidden: true }),
      notice: h('p', { class: 'alert alert-info notice', role: 'status', hidden: true }),
      error: h('p', { class: 'alert alert-error', role: 'alert', hidden: true }),
    };
    const copy = h('button', { type: 'button', class: 'btn btn-icon btn-ghost', title: 'Copy the session id', 'aria-label': 'Copy the session id' }, icon('copy'));
    copy.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(id);
        copy.classList.add('done');
        setTimeout(() => copy.classList.remove('done'), 1200);
      } catch {
        // clipboard refused: the id is selectable text anyway
      }
    });
    this.closeButton = confirmButton('Close session', 'Really close it?', () => this.closeSession(), { class: 'btn btn-danger' });
    // Also what left its command's process group (setsid, daemons), which a timeout cannot reach.
    this.killButton = confirmButton('Kill processes', 'Kill them all?', () => this.killProcesses(), {
      class: 'btn btn-danger-ghost',
      title: 'Kill every process in this session; it stays open with its files',
    });
    // Pause or resume, by the state shown; a snapshot and a fork of one session.
    this.pauseButton = h('button', { type: 'button', class: 'btn btn-ghost', onclick: () => this.togglePause() }, 'Pause');
    this.snapshotButton = h('button', { type: 'button', class: 'btn btn-ghost', title: 'Save its files, runtime and labels (not its processes) under a name', onclick: () => this.askSnapshotName() }, 'Snapshot');
    this.snapshotForm = this.buildSnapshotForm();
    this.forkButton = h('button', { type: 'button', class: 'btn btn-ghost', title: 'Open a new session with its files', onclick: () => this.fork() }, 'Fork');
    const fact = (label, value) => h('div', { class: 'fact' }, h('span', { class: 'fact-label' }, label), h('span', { class: 'fact-value' }, value));

    const head = h(
      'section',
      { class: 'card session-head', 'aria-label': 'Session' },
      h('div', { class: 'session-title' }, h('h2', { class: 'mono session-id', title: id }, id), copy, this.header.state),
      h(
        'div',
        { class: 'facts' },
        fact('Runtime', this.header.runtime),
        fact('Tenant', this.header.tenant),
        fact('Opened', this.header.created),
        fact('Idle', this.header.idle),
        fact('Memory', this.header.memory),
        fact('PIDs', this.header.pids),
      ),
      h('span', { class: 'spacer' }),
      h('div', { class: 'session-actions' }, this.pauseButton, this.snapshotButton, this.forkButton, this.killButton, this.closeButton),
      this.snapshotForm,
      this.header.killed,
      this.header.notice,
      this.header.ended,
      this.header.error,
    );

    this.subtabButtons = {};
    const nav = h('nav', { class: 'subtabs', role: 'tablist', 'aria-label': 'Session tools' });
    for (const [key, label] of SUBTABS) {
      const link = h('a', { role: 'tab', class: 'subtab', href: `#session/${encodeURIComponent(id)}/${key}`, dataset: { subtab: key } }, label);
      this.subtabButtons[key] = link;
      nav.append(link);
    }

    this.views = {
      terminal: new TerminalView(id),
      shell: new ShellView(id),
      files: new FilesView(id),
      activity: new ActivityView(id),
      ports: new PortsView(id),
      notebook: new NotebookView(id),
      network: new NetworkView(id),
    };
    this.panes = {};
    const body = h('div', { class: 'session-body' });
    for (const [key] of SUBTABS) {
      const pane = h('div', { class: `subpanel subpanel-${key}`, role: 'tabpanel', hidden: true });
      this.views[key].mount(pane);
      this.panes[key] = pane;
      body.append(pane);
    }
    this.ui.view.append(head, nav, body);
  }

  showSubtab(key) {
    if (!this.views) return;
    this.subtab = key;
    for (const [name] of SUBTABS) {
      const active = name === key;
      this.subtabButtons[name].classList.toggle('active', active);
      this.subtabButtons[name].setAttribute('aria-selected', String(active));
      show(this.panes[name], active);
      this.views[name].setActive(active && this.visible);
    }
  }

  async load() {
    const id = this.id;
    if (!id) return;
    try {
      const info = await api.get(sessionPath(id));
      if (id !== this.id) return;
      this.info = info;
      show(this.header.error, false);
      this.render();
    } catch (error) {
      if (id !== this.id) return;
      if (error instanceof ApiError && error.status === 404) {
        setText(this.header.error, 'This session does not exist (any more). Pick another on the Sessions tab.');
        show(this.header.error);
        this.setEnded(true);
      } else if (error instanceof ApiError && error.status !== 0) {
        setText(this.header.error, errorText(error));
        show(this.header.error);
      }
    }
  }

  render() {
    const info = this.info;
    const runtime = store.runtime(info.runtime);
    setText(this.header.runtime, info.runtime);
    setText(this.header.tenant, info.tenant || '—');
    this.header.tenant.classList.toggle('muted', !info.tenant);
    this.header.state.replaceChildren(stateBadge(info.state, info.paused_memory));
    setText(this.header.created, fmt.when(info.created_at));
    setText(this.header.idle, info.state === 'running' ? fmt.seconds(info.idle_secs) : '—');
    const memoryLimit = fmt.memoryCeiling(info, runtime);
    setText(this.header.memory, memoryLimit ? `${fmt.bytes(info.memory_bytes)} of ${fmt.bytes(memoryLimit)}` : fmt.bytes(info.memory_bytes));
    setText(this.header.pids, runtime ? `${fmt.count(info.process_count)} of ${fmt.count(runtime.pids_limit)}` : fmt.count(info.process_count));
    setText(this.pauseButton, info.state === 'paused' ? 'Resume' : 'Pause');
    // What the runtime cannot use is not offered (its pane, reached by its address, says why).
    if (runtime) {
      this.subtabButtons.notebook.hidden = Object.keys(runtime.kernels || {}).length === 0;
      this.subtabButtons.network.hidden = runtime.network_mode !== 'egress';
    }
    const ended = info.state === 'ended';
    if (ended) {
      const reason = info.end_reason ? `: ${info.end_reason}` : '';
      setText(this.header.ended, `This session ended ${fmt.when(info.ended_at)}${reason}. Its record and activity stay; nothing more can run in it.`);
    }
    show(this.header.ended, ended);
    this.setEnded(ended);
    for (const view of Object.values(this.views)) view.setRuntime?.(runtime);
  }

  /** The events said a session ended: if it is this one, it shows at once, with why. */
  endedOutside(id) {
    if (id === this.id) this.load();
  }

  setEnded(ended) {
    this.closeButton.hidden = ended;
    this.killButton.hidden = ended;
    for (const button of [this.pauseButton, this.snapshotButton, this.forkButton]) button.hidden = ended;
    if (ended) show(this.snapshotForm, false);
    if (ended) show(this.header.killed, false);
    if (ended) show(this.header.notice, false);
    for (const view of Object.values(this.views || {})) view.setEnded?.(ended);
  }

  async killProcesses() {
    try {
      const { killed, remaining } = await api.delete(sessionPath(this.id, '/processes'));
      const plural = (n) => (n === 1 ? 'process' : 'processes');
      setText(
        this.header.killed,
        remaining
          ? `Killed ${fmt.count(killed)} ${plural(killed)}; ${fmt.count(remaining)} still running (forking faster than they could be killed): kill again, or close the session.`
          : `Killed ${fmt.count(killed)} ${plural(killed)}.`,
      );
      show(this.header.killed);
      await this.load();
      this.views.activity.refresh();
    } catch (error) {
      setText(this.header.error, errorText(error));
      show(this.header.error);
    }
  }

  /** Runs one action on the session, shows `said(answer)` (text or nodes) in the notice line, reloads. */
  async act(action, said) {
    try {
      const answer = await action();
      fill(this.header.notice, said(answer));
      show(this.header.notice);
      window.dispatchEvent(new Event('sandboxd:changed'));
      await this.load();
      this.views.activity.refresh();
    } catch (error) {
      setText(this.header.error, errorText(error));
      show(this.header.error);
    }
  }

  togglePause() {
    const resume = this.info?.state === 'paused';
    return this.act(
      () => api.post(sessionPath(this.id, resume ? '/resume' : '/pause'), {}),
      (info) => (resume
        ? 'Resumed: its processes go on where they stopped.'
        : info?.paused_memory === 'disk'
          ? 'Paused to disk: no CPU, its memory released; processes and files kept. Any command resumes it.'
          : 'Paused: no CPU; memory, processes and files kept. Any command resumes it.'),
    );
  }

  /** The form that names a snapshot before it is taken (the name lists it on the Sessions tab). */
  buildSnapshotForm() {
    const input = h('input', { type: 'text', class: 'snapshot-name', maxlength: '128', required: true, spellcheck: 'false', 'aria-label': 'Snapshot name' });
    const cancel = h('button', { type: 'button', class: 'btn btn-ghost btn-small' }, 'Cancel');
    const form = h(
      'form',
      { class: 'snapshot-form', autocomplete: 'off', hidden: true },
      h('label', { class: 'field field-inline' }, h('span', { class: 'field-label' }, 'Snapshot name'), input),
      h('button', { type: 'submit', class: 'btn btn-primary btn-small snapshot-save' }, 'Save snapshot'),
      cancel,
    );
    cancel.addEventListener('click', () => show(form, false));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const name = input.value.trim();
      if (!name) return;
      show(form, false);
      await this.snapshot(name);
    });
    form.nameInput = input;
    return form;
  }

  askSnapshotName() {
    const form = this.snapshotForm;
    if (!form.hidden) return show(form, false);
    const runtime = this.info ? this.info.runtime : 'session';
    form.nameInput.value = `${runtime} ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`;
    show(form);
    form.nameInput.focus();
    form.nameInput.select();
  }

  snapshot(name) {
    return this.act(
      () => api.post(sessionPath(this.id, '/snapshots'), { name }),
      (snapshot) => `Snapshot "${snapshot.name}" (${snapshot.id}) saved, ${fmt.bytes(snapshot.bytes)}; open a session from it under Snapshots on the Sessions tab.`,
    );
  }

  /** Forks one session; the notice links to the new one. */
  fork() {
    return this.act(
      () => api.post(sessionPath(this.id, '/fork'), { count: 1 }),
      (forked) => [
        'Forked into ',
        forked.sessions.map((s, i) => [i ? ', ' : '', h('a', { class: 'mono fork-link', href: `#session/${encodeURIComponent(s.id)}`, title: s.id }, fmt.shortId(s.id))]),
        '.',
      ],
    );
  }

  async closeSession() {
    try {
      await api.delete(sessionPath(this.id));
      window.dispatchEvent(new Event('sandboxd:changed'));
      await this.load();
      this.views.activity.refresh();
    } catch (error) {
      setText(this.header.error, errorText(error));
      show(this.header.error);
    }
  }

  dispose() {
    for (const view of Object.values(this.views || {})) view.dispose();
    this.views = null;
    this.panes = null;
  }
}
