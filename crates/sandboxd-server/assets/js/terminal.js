// The session's terminal: one command at a time, each its own process, with stdout and stderr
// told apart, exit code and duration, a history on the arrow keys; and beside it the Source
// pane, which runs a program with the runtime's interpreter.
//
// How source runs: `[...interpreter, "-"]` with the source as its stdin. `python3 -` (like
// `sh -`, `node -`, `ruby -`) reads the program from stdin, so any size up to the body limit
// works and the source never appears in an argument list (the activity log names only the
// program). The program's own stdin is therefore the source: `input()` reads end-of-file.

import { h, icon, setText } from './dom.js';
import * as fmt from './format.js';
import { errorText } from './sessions.js';
import { runCommand } from './runner.js';

const MAX_ENTRIES = 200;
const MAX_HISTORY = 500;
const histories = new Map(); // session id -> commands, oldest first (memory only)
const sources = new Map(); // session id -> the Source pane's text
const transcripts = new Map(); // session id -> the output element, kept while the page lives

export class TerminalView {
  constructor(id) {
    this.id = id;
    this.history = histories.get(id) || [];
    histories.set(id, this.history);
    this.cursor = this.history.length;
    this.draft = '';
    this.running = null;
    this.ended = false;
    this.runtime = null;
  }

  mount(pane) {
    const kept = transcripts.get(this.id);
    this.output = kept || h('div', { class: 'term-output', role: 'log', 'aria-live': 'polite', 'aria-label': 'Command output', tabindex: '0' });
    transcripts.set(this.id, this.output);
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
    this.stopButton = h('button', { type: 'button', class: 'btn btn-small btn-danger-ghost', hidden: true, onclick: () => this.stop() }, icon('stop'), 'Stop');
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

    const terminal = h(
      'section',
      { class: 'term', 'aria-label': 'Terminal' },
      h(
        'header',
        { class: 'term-head' },
        h('h3', null, 'Terminal'),
        h('span', { class: 'term-mode' }),
        h('span', { class: 'spacer' }),
        clear,
      ),
      h('p', { class: 'term-note' }, 'Each command is its own process — a ', h('code', null, 'cd'), ' does not carry to the next one. Chain with ', h('code', null, '&&'), ' instead.'),
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
    this.source.value = sources.get(this.id) || '';
    this.source.addEventListener('input', () => sources.set(this.id, this.source.value));
    this.source.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        this.runSource();
      } else if (event.key === 'Tab' && !event.shiftKey && !event.ctrlKey && !event.altKey) {
        event.preventDefault();
        this.source.setRangeText('    ', this.source.selectionStart, this.source.selectionEnd, 'end');
        sources.set(this.id, this.source.value);
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
    if (!kept) this.welcome();
    else requestAnimationFrame(() => this.scroll(true));
  }

  welcome() {
    this.output.append(h('div', { class: 'term-hint' }, `Connected to session ${this.id}. Type a command and press Enter; ↑ and ↓ walk the history.`));
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
    this.execute({ command }, h('span', { class: 'cmd-text' }, command), '$');
  }

  runSource() {
    const source = this.source.value;
    if (!source.trim() || this.running || this.ended) return;
    const interpreter = this.interpreter();
    const lines = source.replace(/\n+$/, '').split('\n').length;
    const label = h('span', { class: 'cmd-text' }, `${interpreter.join(' ')} - `, h('span', { class: 'cmd-meta' }, `# the Source pane, ${lines} line${lines === 1 ? '' : 's'}`));
    this.execute({ argv: [...interpreter, '-'], stdin: source }, label, '▶');
  }

  clear() {
    this.output.replaceChildren();
  }

  async execute(request, label, promptChar) {
    const out = h('pre', { class: 'entry-out' });
    const status = h('div', { class: 'entry-status running' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), 'running…');
    const entry = h('div', { class: 'entry' }, h('div', { class: 'entry-cmd' }, h('span', { class: 'prompt' }, promptChar), ' ', label), out, status);
    this.output.append(entry);
    while (this.output.childElementCount > MAX_ENTRIES) this.output.firstElementChild.remove();
    this.scroll(true);
    const started = performance.now();
    const ticker = setInterval(() => {
      status.lastChild.textContent = `running… ${fmt.millis(performance.now() - started)}`;
    }, 250);
    const atBottom = () => this.output.scrollHeight - this.output.scrollTop - this.output.clientHeight < 40;
    const write = (stream, text) => {
      if (!text) return;
      const stick = atBottom();
      // Consecutive text of one stream goes into one span; a change of stream starts another.
      const last = out.lastElementChild;
      if (last && last.dataset.stream === stream) last.append(text);
      else out.append(h('span', { class: `out-${stream}`, dataset: { stream } }, text));
      this.scroll(stick);
    };
    this.running = { stop: null };
    let commandStarted = false;
    this.setEnded(this.ended);
    this.stopButton.hidden = true;
    let result;
    try {
      result = await runCommand(this.id, request, {
        write,
        onStart: (controls) => {
          commandStarted = true;
          this.running.stop = controls.stop;
          this.stopButton.replaceChildren(icon('stop'), 'Stop');
          this.stopButton.hidden = !controls.stop;
          status.dataset.streaming = controls.streaming ? 'true' : 'false';
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
    fill(status, result);
    if (!out.childElementCount) out.remove();
    this.scroll(atBottom());
    if (result.error && result.error.status === 409) {
      window.dispatchEvent(new Event('sandboxd:changed'));
    }
    if (!this.ended) this.input.focus({ preventScroll: true });
    window.dispatchEvent(new CustomEvent('sandboxd:activity', { detail: { session: this.id } }));

    function fill(element, r) {
      element.classList.remove('running');
      element.replaceChildren();
      if (r.error) {
        element.classList.add('fail');
        // Once it runs, a failure is of the connection, not of the command.
        element.append(`${commandStarted ? 'lost the output' : 'not run'}: ${errorText(r.error)}`);
        return;
      }
      const parts = [];
      let ok = true;
      if (r.timed_out) {
        ok = false;
        parts.push('timed out, killed');
      }
      if (r.oom_killed) {
        ok = false;
        parts.push('killed: out of memory');
      }
      if (r.exit_code !== null && r.exit_code !== undefined) {
        parts.unshift(`exit ${r.exit_code}`);
        if (r.exit_code !== 0) ok = false;
      } else if (r.signal) {
        ok = false;
        parts.unshift(`killed by signal ${r.signal}`);
      }
      if (r.stdout_truncated) parts.push('stdout cut at the policy limit');
      if (r.stderr_truncated) parts.push('stderr cut at the policy limit');
      if (r.gap) parts.push('some output was dropped while away');
      parts.push(fmt.millis(r.duration_ms));
      element.classList.add(ok ? 'ok' : 'fail');
      element.append(h('span', { class: 'status-mark', 'aria-hidden': 'true' }, ok ? '✓' : '✗'), parts.join(' · '));
    }
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

  dispose() {
    // A running command goes on (the service keeps it); only this view of it goes away.
    this.disposed = true;
  }
}

