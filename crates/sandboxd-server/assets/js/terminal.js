// The session's terminal: one command at a time, each its own process, with stdout and stderr
// told apart, exit code and duration, a history on the arrow keys; and beside it the Source
// pane, which runs a program with the runtime's interpreter.
//
// How source runs: `[...interpreter, "-"]` with the source as its input. `python3 -` (like
// `sh -`, `node -`, `ruby -`) reads the program from stdin, so any size up to the body limit
// works and the source never appears in an argument list (the activity log names only the
// program). The program's own stdin is therefore the source: `input()` reads end-of-file.
//
// Output is drawn by OutputView (bounded, batched per frame). The transcript, the history and
// the Source text are kept in session storage, so a reload of the tab finds them again.

import { h, icon, setText } from './dom.js';
import * as fmt from './format.js';
import { errorText } from './sessions.js';
import { runCommand } from './runner.js';
import { OutputView } from './output.js';
import { store } from './store.js';

const MAX_ENTRIES = 100;
const MAX_HISTORY = 500;
/** What one session's transcript may take in session storage, as JSON characters. */
const MAX_STORED_CHARS = 1_000_000;
const STORAGE_PREFIX = 'sandboxd.terminal.';
const SAVE_DELAY_MS = 500;
const kept = new Map(); // session id -> {history, source, entries}, while the page lives

/** The session's terminal state: from this page, else from session storage, else empty. */
function stateOf(id) {
  if (kept.has(id)) return kept.get(id);
  let state = null;
  try {
    state = JSON.parse(sessionStorage.getItem(STORAGE_PREFIX + id) || 'null');
  } catch {
    state = null;
  }
  state = {
    history: Array.isArray(state?.history) ? state.history.map(String) : [],
    source: typeof state?.source === 'string' ? state.source : '',
    saved: Array.isArray(state?.entries) ? state.entries : [],
    entries: [],
  };
  kept.set(id, state);
  return state;
}

export class TerminalView {
  constructor(id) {
    this.id = id;
    this.state = stateOf(id);
    this.history = this.state.history;
    this.cursor = this.history.length;
    this.draft = '';
    this.running = null;
    this.ended = false;
    this.runtime = null;
    this.saveTimer = null;
    this.onPageHide = () => this.save();
    window.addEventListener('pagehide', this.onPageHide);
  }

  mount(pane) {
    const reused = this.state.element;
    this.output = reused || h('div', { class: 'term-output', role: 'log', 'aria-live': 'off', 'aria-label': 'Command output', tabindex: '0' });
    this.state.element = this.output;
    this.input = h('input', {
      class: 'term-input',
      type: 'text',
      autocomplete: 'off',
      spellcheck: 'false',
      autocapitalize: 'off',
      'aria-label': 'Command',
      placeholder: 'echo hello && ls -la',
    });
    this.runButton = h('button', { type: 'submit', class: 'btn btn-primary btn-small' }, 'Run');
    // Outside the output and never disabled while a command runs: it must take a click
    // whatever the output does.
    this.stopButton = h('button', { type: 'button', class: 'btn btn-small btn-danger-ghost term-stop', hidden: true, onclick: () => this.stop() }, icon('stop'), 'Stop');
    const form = h(
      'form',
      { class: 'term-prompt', autocomplete: 'off' },
      h('span', { class: 'prompt', 'aria-hidden': 'true' }, '$'),
      this.input,
      this.stopButton,
      this.runButton,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.submit();
    });
    this.input.addEventListener('keydown', (event) => this.onKey(event));
    const clear = h('button', { type: 'button', class: 'btn btn-ghost btn-small', onclick: () => this.clear() }, 'Clear');
    this.timeoutNote = h('span', { class: 'term-timeout' });

    const terminal = h(
      'section',
      { class: 'term', 'aria-label': 'Commands' },
      h('header', { class: 'term-head' }, h('h3', null, 'Commands'), h('span', { class: 'term-mode' }), h('span', { class: 'spacer' }), clear),
      h('p', { class: 'term-note' }, 'One command at a time, each with its own output and exit code (for a live shell, see Shell). Each command is its own process — a ', h('code', null, 'cd'), ' does not carry to the next one. Chain with ', h('code', null, '&&'), ' instead. ', this.timeoutNote),
      this.output,
      form,
    );

    this.source = h('textarea', {
      class: 'source-text',
      spellcheck: 'false',
      autocomplete: 'off',
      autocapitalize: 'off',
      wrap: 'off',
      'aria-label': 'Source code',
      placeholder: 'print("hello from the sandbox")',
    });
    this.source.value = this.state.source;
    this.source.addEventListener('input', () => this.sourceChanged());
    this.source.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        this.runSource();
      } else if (event.key === 'Tab' && !event.shiftKey && !event.ctrlKey && !event.altKey) {
        event.preventDefault();
        this.source.setRangeText('    ', this.source.selectionStart, this.source.selectionEnd, 'end');
        this.sourceChanged();
      }
    });
    this.interpreterLabel = h('span', { class: 'source-interp mono' });
    this.sourceRun = h('button', { type: 'button', class: 'btn btn-primary btn-small', onclick: () => this.runSource() }, icon('play'), 'Run');
    this.sourceNote = h('p', { class: 'source-note' });
    const sourcePane = h(
      'section',
      { class: 'source', 'aria-label': 'Source' },
      h('header', { class: 'term-head' }, h('h3', null, 'Source'), this.interpreterLabel, h('span', { class: 'spacer' }), this.sourceRun),
      this.source,
      this.sourceNote,
    );
    pane.append(h('div', { class: 'term-grid' }, terminal, sourcePane));
    this.setRuntime(null);
    this.renderTimeout();
    this.unsubscribePolicy = store.on('policy', () => this.renderTimeout());
    if (!reused) {
      if (this.state.saved.length) this.restoreSaved();
      else this.welcome();
    }
    requestAnimationFrame(() => this.scroll(true));
  }

  welcome() {
    this.output.append(h('div', { class: 'term-hint' }, `Connected to session ${this.id}. Type a command and press Enter; ↑ and ↓ walk the history.`));
  }

  /** The one timeout rule, said where commands are typed. */
  renderTimeout() {
    const policy = store.policy;
    setText(
      this.timeoutNote,
      policy ? `A command runs for at most ${fmt.seconds(policy.default_timeout_secs)} (policy.default_timeout_secs), then it is killed.` : '',
    );
  }

  setActive(active) {
    if (active && !this.ended) setTimeout(() => this.input.focus({ preventScroll: true }), 0);
  }

  setRuntime(runtime) {
    this.runtime = runtime;
    const interpreter = this.interpreter();
    setText(this.interpreterLabel, interpreter.join(' '));
    const configured = runtime && runtime.interpreter && runtime.interpreter.length;
    setText(
      this.sourceNote,
      configured
        ? `Runs as ${interpreter.join(' ')} - with the source on its stdin (Ctrl+Enter). Output appears in the terminal.`
        : `This runtime names no interpreter, so the source runs as a shell script: sh - with the source on its stdin (Ctrl+Enter).`,
    );
  }

  interpreter() {
    const runtime = this.runtime;
    return runtime && runtime.interpreter && runtime.interpreter.length ? runtime.interpreter : ['sh'];
  }

  setEnded(ended) {
    this.ended = ended;
    this.input.disabled = ended;
    this.runButton.disabled = ended || Boolean(this.running);
    this.sourceRun.disabled = ended || Boolean(this.running);
    this.input.placeholder = ended ? 'the session has ended' : 'echo hello && ls -la';
  }

  onKey(event) {
    if (event.key === 'ArrowUp') {
      if (this.cursor === 0) return;
      if (this.cursor === this.history.length) this.draft = this.input.value;
      this.cursor -= 1;
      this.input.value = this.history[this.cursor];
      event.preventDefault();
      queueMicrotask(() => this.input.setSelectionRange(this.input.value.length, this.input.value.length));
    } else if (event.key === 'ArrowDown') {
      if (this.cursor >= this.history.length) return;
      this.cursor += 1;
      this.input.value = this.cursor === this.history.length ? this.draft : this.history[this.cursor];
      event.preventDefault();
    } else if (event.key === 'c' && event.ctrlKey && this.running && !this.input.value) {
      event.preventDefault();
      this.stop();
    } else if (event.key === 'l' && event.ctrlKey) {
      event.preventDefault();
      this.clear();
    }
  }

  submit() {
    const command = this.input.value;
    if (!command.trim() || this.running || this.ended) return;
    if (this.history[this.history.length - 1] !== command) {
      this.history.push(command);
      if (this.history.length > MAX_HISTORY) this.history.splice(0, this.history.length - MAX_HISTORY);
    }
    this.cursor = this.history.length;
    this.draft = '';
    this.input.value = '';
    this.execute({ command }, { prompt: '$', cmd: command, note: null });
  }

  runSource() {
    const source = this.source.value;
    if (!source.trim() || this.running || this.ended) return;
    const interpreter = this.interpreter();
    const lines = source.replace(/\n+$/, '').split('\n').length;
    this.execute({ argv: [...interpreter, '-'], input: source }, { prompt: '▶', cmd: `${interpreter.join(' ')} - `, note: `# the Source pane, ${lines} line${lines === 1 ? '' : 's'}` });
  }

  sourceChanged() {
    this.state.source = this.source.value;
    this.scheduleSave();
  }

  clear() {
    this.output.replaceChildren();
    this.state.entries = [];
    this.state.saved = [];
    this.scheduleSave();
  }

  /** Adds an entry's elements: the command line, its output and its status line. */
  addEntry(label, view) {
    const status = h('div', { class: 'entry-status' });
    const element = h(
      'div',
      { class: 'entry' },
      h('div', { class: 'entry-cmd' }, h('span', { class: 'prompt' }, label.prompt), ' ', h('span', { class: 'cmd-text' }, label.cmd, label.note ? h('span', { class: 'cmd-meta' }, label.note) : null)),
      view.element,
      status,
    );
    this.output.append(element);
    const entry = { label, view, status, element, statusText: '', statusClass: '' };
    this.state.entries.push(entry);
    while (this.state.entries.length > MAX_ENTRIES) this.state.entries.shift().element.remove();
    return entry;
  }

  restoreSaved() {
    for (const saved of this.state.saved) {
      if (!saved || !saved.label) continue;
      const entry = this.addEntry(saved.label, OutputView.restore(saved.output || {}));
      setStatus(entry, saved.statusText || 'shown again after a reload', saved.statusClass || 'ok');
      if (entry.view.empty) entry.view.element.hidden = true;
    }
    this.state.saved = [];
  }

  async execute(request, label) {
    const view = new OutputView();
    const entry = this.addEntry(label, view);
    const status = entry.status;
    status.classList.add('running');
    status.replaceChildren(h('span', { class: 'spinner', 'aria-hidden': 'true' }), h('span', null, 'running…'));
    this.scroll(true);
    const started = performance.now();
    const ticker = setInterval(() => {
      status.lastChild.textContent = `running… ${fmt.millis(performance.now() - started)}`;
    }, 250);
    const atBottom = () => this.output.scrollHeight - this.output.scrollTop - this.output.clientHeight < 40;
    // Sticks to the bottom as output is drawn, unless the user scrolled up to read.
    let stick = true;
    const onScroll = () => {
      stick = atBottom();
    };
    this.output.addEventListener('scroll', onScroll, { passive: true });
    const follow = new MutationObserver(() => {
      if (stick) this.output.scrollTop = this.output.scrollHeight;
    });
    follow.observe(view.element, { childList: true, subtree: true });
    this.running = { stop: null };
    let commandStarted = false;
    this.setEnded(this.ended);
    this.stopButton.hidden = true;
    let result;
    try {
      result = await runCommand(this.id, request, {
        write: (stream, text) => view.write(stream, text),
        dropped: (bytes) => view.dropped(bytes),
        onStart: (controls) => {
          commandStarted = true;
          this.running.stop = controls.stop;
          this.stopButton.replaceChildren(icon('stop'), 'Stop');
          this.stopButton.hidden = !controls.stop;
        },
      });
    } catch (error) {
      result = { error };
    } finally {
      clearInterval(ticker);
      this.running = null;
      this.stopButton.hidden = true;
      this.setEnded(this.ended);
    }
    view.draw();
    follow.disconnect();
    this.output.removeEventListener('scroll', onScroll);
    if (view.empty) view.element.hidden = true;
    status.classList.remove('running');
    const [text, ok] = this.describe(result, commandStarted, view);
    setStatus(entry, text, ok ? 'ok' : 'fail');
    if (stick) this.scroll(true);
    if (result.error && result.error.status === 409) window.dispatchEvent(new Event('sandboxd:changed'));
    if (!this.ended) this.input.focus({ preventScroll: true });
    this.scheduleSave();
    window.dispatchEvent(new CustomEvent('sandboxd:activity', { detail: { session: this.id } }));
  }

  /** How a command ended, in words, and whether that is success. */
  describe(r, commandStarted, view) {
    // Once it runs, a failure is of the connection, not of the command.
    if (r.error) return [`${commandStarted ? 'lost the output' : 'not run'}: ${errorText(r.error)}`, false];
    const parts = [];
    let ok = true;
    const interrupted = r.signal === 2 || r.exit_code === 130;
    if (r.exit_code !== null && r.exit_code !== undefined) {
      parts.push(`exit ${r.exit_code}`);
      if (r.exit_code !== 0) ok = false;
    } else if (r.signal) {
      ok = false;
      parts.push(`killed by signal ${r.signal}${r.signal === 9 ? ' (SIGKILL)' : r.signal === 2 ? ' (SIGINT)' : ''}`);
    }
    if (r.oom_killed) {
      ok = false;
      const limit = this.runtime ? ` (the sandbox's memory limit is ${fmt.bytes(this.runtime.mem_limit_bytes)})` : '';
      parts.push(`out of memory: the kernel killed it${limit}`);
    } else if (r.timed_out) {
      ok = false;
      parts.push(`timed out after ${fmt.seconds(r.timeout_secs)}, killed`);
    } else if (interrupted) {
      parts.push('interrupted');
    }
    const policy = store.policy;
    const cut = view.droppedBytes || r.stdout_truncated || r.stderr_truncated;
    if (cut) {
      const limit = policy ? fmt.bytes(policy.max_output_bytes) : 'the limit';
      parts.push(`output cut: more came than the service keeps (${limit} per stream, policy.max_output_bytes); the start and the end are shown`);
    }
    parts.push(fmt.millis(r.duration_ms));
    return [parts.join(' · '), ok];
  }

  stop() {
    if (!this.running || !this.running.stop) return;
    this.running.stop();
    // A second Stop kills it outright.
    this.stopButton.replaceChildren(icon('stop'), 'Kill');
  }

  scroll(stick) {
    if (stick) this.output.scrollTop = this.output.scrollHeight;
  }

  scheduleSave() {
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => this.save(), SAVE_DELAY_MS);
  }

  /** Writes history, Source text and transcript to session storage, within its bound. */
  save() {
    clearTimeout(this.saveTimer);
    // A command still running is kept as such: it goes on in the sandbox without this page.
    const entries = this.state.entries.map((e) => ({
      label: e.label,
      statusText: e.statusText || 'still running when the page was left; it goes on in the sandbox',
      statusClass: e.statusClass || 'fail',
      output: e.view.snapshot(),
    }));
    let json = '';
    for (;;) {
      json = JSON.stringify({ history: this.history.slice(-100), source: this.state.source, entries });
      if (json.length <= MAX_STORED_CHARS || entries.length === 0) break;
      entries.shift();
    }
    try {
      sessionStorage.setItem(STORAGE_PREFIX + this.id, json);
    } catch {
      // storage full or refused: the page keeps them while it lives
    }
  }

  dispose() {
    // A running command goes on (the service keeps it); only this view of it goes away.
    this.save();
    this.disposed = true;
    this.unsubscribePolicy?.();
    window.removeEventListener('pagehide', this.onPageHide);
  }
}

function setStatus(entry, text, cls) {
  entry.statusText = text;
  entry.statusClass = cls;
  const status = entry.status;
  status.classList.remove('ok', 'fail');
  status.classList.add(cls);
  status.replaceChildren(h('span', { class: 'status-mark', 'aria-hidden': 'true' }, cls === 'ok' ? '✓' : '✗'), text);
}
