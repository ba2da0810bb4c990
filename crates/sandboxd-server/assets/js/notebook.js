// The session's notebook: code cells run in the session's default code context (a Jupyter
// kernel in the sandbox), so variables and imports persist from one cell to the next.
//
// One request per cell: POST /v1/sessions/{id}/code answers with server-sent events (`stdout`,
// `stderr`, `result` with a MIME bundle, `error`, then `end`; `failed` if the run broke off),
// read with fetch like the terminal's runs. What a sandbox sends is hostile: text goes on the
// page as text; a PNG only as a data: URL of an <img>; HTML only inside an iframe sandboxed
// with no permission at all (no scripts, an opaque origin), never into this page. Code is
// highlighted as the cells' language while it is typed (js/highlight.js); a runtime with
// several kernels offers them in a list, and cells run in the default context of the one chosen.

import { api, request, readEventStream, sessionPath, ApiError } from './api.js';
import { h, setText, show, styleNonce } from './dom.js';
import { errorText } from './sessions.js';
import { highlightInto } from './highlight.js';

const RECIPE = 'python-interpreter';
/** Base64 of the image types shown as <img>; anything else falls back to text. */
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif'];
// The kernel's colour codes in tracebacks (CSI sequences and lone ESCs).
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b/g;

// The page requires Trusted Types; this one policy, made once here, is what lets HTML from a
// result reach an iframe's srcdoc. It is used for nothing else, and only for iframes that
// have `sandbox=""` (no scripts, no same origin, no forms, no navigation of this page).
const framePolicy = window.trustedTypes?.createPolicy('sandboxd-notebook-frame', { createHTML: (html) => html });
// A frame's document inherits the page's policy, which admits <style> elements only with the
// page's nonce: a result's own styles (pandas' DataFrame table) get it. The frame's policy of
// its own then narrows what it may do to styling itself: no fetch of any kind (so no style can
// send anything anywhere, the nonce included), images only as data: URLs.
const FRAME_POLICY = `default-src 'none'; style-src 'nonce-${styleNonce}'; img-src data:`;
/** Rows the frame is sized for before it scrolls (it cannot measure its opaque document). */
const FRAME_ROWS = { min: 3, max: 20 };
/** A cell's code area grows with its lines up to this, then scrolls. */
const CODE_ROWS = { min: 3, max: 30 };

const OUTCOMES = {
  ok: null,
  error: null,
  timed_out: 'Stopped: the run hit its timeout and the kernel was interrupted.',
  kernel_died: 'The kernel died while it ran.',
};

export function stripAnsi(text) {
  return String(text).replace(ANSI, '');
}

export class NotebookView {
  constructor(id) {
    this.id = id;
    this.ended = false;
    this.runtime = undefined;
    this.cells = 0;
    /** The code context the cells run in, once a run has named it. */
    this.context = null;
    /** The kernel language cells are highlighted as and run in, once the runtime is known. */
    this.language = null;
    /** Each cell's code area and the highlighted copy of its text behind it. */
    this.editors = [];
  }

  mount(pane) {
    this.note = h(
      'p',
      { class: 'prose notebook-note', hidden: true },
      `This session's runtime has no code kernel. Open a session of a runtime built from the ${RECIPE} recipe (the default config's "interpreter" runtime) to run code cells with plots and tables.`,
    );
    this.list = h('div', { class: 'notebook-cells' });
    this.addButton = h('button', { type: 'button', class: 'btn btn-ghost btn-small', onclick: () => this.addCell().focus() }, 'Add cell');
    this.languagePicker = h('select', { class: 'notebook-language', 'aria-label': 'Language', hidden: true, onchange: () => this.setLanguage(this.languagePicker.value) });
    this.restartButton = h('button', { type: 'button', class: 'btn btn-ghost btn-small notebook-restart', title: 'Start the kernel afresh: every variable and import is gone', onclick: () => this.restart() }, 'Restart kernel');
    this.notice = h('p', { class: 'alert alert-info', role: 'status', hidden: true });
    this.body = h('div', { class: 'notebook-body' }, this.notice, this.list, h('div', { class: 'notebook-actions' }, this.addButton, this.restartButton));
    pane.append(
      h(
        'section',
        { class: 'card notebook', 'aria-label': 'Notebook' },
        h('header', { class: 'card-head' }, h('h3', null, 'Notebook'), this.languagePicker),
        h('p', { class: 'prose' }, 'Cells run in one kernel in the sandbox, per language: what one cell defines, the next can use. Shift+Enter runs a cell.'),
        this.note,
        this.body,
      ),
    );
    this.addCell();
    if (this.runtime) this.setRuntime(this.runtime);
    this.render();
  }

  setRuntime(runtime) {
    this.runtime = runtime;
    // As the service chooses without a language: python when the runtime has it, else its first.
    const kernels = Object.keys(runtime?.kernels || {});
    if (!kernels.includes(this.language)) this.setLanguage(kernels.includes('python') ? 'python' : kernels[0] || null);
    if (this.languagePicker) {
      this.languagePicker.replaceChildren(...kernels.map((name) => h('option', { value: name, selected: name === this.language }, name)));
      show(this.languagePicker, kernels.length > 1);
    }
    this.render();
  }

  /** Cells are highlighted as `language` and run in its kernel from now on. */
  setLanguage(language) {
    this.language = language;
    for (const editor of this.editors) editor.highlight();
  }

  setEnded(ended) {
    this.ended = ended;
    this.render();
  }

  setActive() {}

  /** Kernels known: the body; known none: the note; unknown yet: neither. */
  render() {
    if (!this.body) return;
    const kernels = this.runtime ? Object.keys(this.runtime.kernels || {}) : null;
    show(this.note, kernels !== null && kernels.length === 0);
    show(this.body, kernels !== null && kernels.length > 0);
    for (const button of this.list.querySelectorAll('button.notebook-run')) button.disabled = this.ended || button.dataset.running === '1';
    this.addButton.disabled = this.ended;
    this.restartButton.disabled = this.ended || !this.context;
  }

  async restart() {
    if (!this.context) return;
    try {
      await api.post(sessionPath(this.id, `/contexts/${encodeURIComponent(this.context)}/restart`), {});
      setText(this.notice, 'The kernel was restarted: variables and imports from earlier cells are gone.');
    } catch (error) {
      setText(this.notice, errorText(error));
    }
    show(this.notice);
  }

  /** Appends an empty cell and answers its textarea. */
  addCell() {
    this.cells += 1;
    const code = h('textarea', { class: 'notebook-code mono', rows: CODE_ROWS.min, spellcheck: 'false', autocapitalize: 'off', 'aria-label': `Cell ${this.cells} code` });
    // The text is drawn highlighted behind the code area, whose own text is transparent.
    const shown = h('pre', { class: 'notebook-highlight mono', 'aria-hidden': 'true' });
    const editor = {
      highlight: () => {
        highlightInto(shown, code.value, this.language);
        // A last empty line is drawn by the code area; a <pre> needs a character to show it.
        shown.append('\n');
        shown.dataset.language = this.language || '';
      },
    };
    this.editors.push(editor);
    editor.highlight();
    code.addEventListener('input', () => {
      code.rows = Math.min(CODE_ROWS.max, Math.max(CODE_ROWS.min, code.value.split('\n').length));
      editor.highlight();
    });
    code.addEventListener('scroll', () => {
      shown.scrollTop = code.scrollTop;
      shown.scrollLeft = code.scrollLeft;
    }, { passive: true });
    const output = h('div', { class: 'notebook-output', 'aria-live': 'polite' });
    const status = h('span', { class: 'card-sub notebook-status' });
    const run = h('button', { type: 'button', class: 'btn btn-small notebook-run' }, 'Run');
    const cell = h('div', { class: 'notebook-cell', dataset: { cell: String(this.cells) } }, h('div', { class: 'notebook-input' }, h('div', { class: 'notebook-editor' }, shown, code), h('div', { class: 'notebook-actions' }, run, status)), output);
    const go = () => this.runCell({ code, output, status, run, cell });
    run.addEventListener('click', go);
    code.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && event.shiftKey) {
        event.preventDefault();
        go();
      }
    });
    this.list.append(cell);
    this.render();
    return code;
  }

  async runCell({ code, output, status, run, cell }) {
    if (this.ended || run.dataset.running === '1' || !code.value.trim()) return;
    run.dataset.running = '1';
    run.disabled = true;
    output.replaceChildren();
    setText(status, 'running…');
    const started = performance.now();
    let end = null;
    try {
      const response = await request('POST', sessionPath(this.id, '/code'), {
        json: this.language ? { code: code.value, language: this.language } : { code: code.value },
        headers: { Accept: 'text/event-stream' },
      });
      await readEventStream(response, ({ event, data }) => {
        const body = data ? JSON.parse(data) : {};
        if (event === 'stdout' || event === 'stderr') appendStream(output, event, body.text || '');
        else if (event === 'result') output.append(resultView(body.data || {}));
        else if (event === 'error') output.append(errorView(body));
        else if (event === 'end') end = body;
        else if (event === 'failed') throw new ApiError(502, body.code || 'run_failed', body.message || 'the run failed');
      });
      if (!end) throw new ApiError(502, 'stream_failed', 'the run\'s stream ended before the run did');
      setText(status, endText(end));
      this.context = end.context || this.context;
      this.render();
      cell.dataset.outcome = end.outcome;
      const said = OUTCOMES[end.outcome];
      const notes = [said, end.restarted && 'The kernel was restarted: variables and imports from earlier cells are gone.', end.truncated && `Output over the policy's limit was left out (${end.dropped_bytes} bytes).`].filter(Boolean);
      for (const note of notes) output.append(h('p', { class: 'alert alert-info notebook-end', role: 'status' }, note));
      // The last cell run: a fresh one follows, as in a notebook.
      if (cell === this.list.lastElementChild) this.addCell().focus();
    } catch (error) {
      setText(status, 'failed');
      cell.dataset.outcome = 'failed';
      output.append(h('p', { class: 'alert alert-error', role: 'alert' }, errorText(error)));
    } finally {
      delete run.dataset.running;
      run.disabled = this.ended;
      if (!end) setText(status, `${status.textContent} after ${Math.round(performance.now() - started)} ms`);
    }
  }

  dispose() {}
}

function endText(end) {
  const count = end.execution_count ? `[${end.execution_count}] ` : '';
  const outcome = { ok: 'done', error: 'error', timed_out: 'timed out', kernel_died: 'kernel died' }[end.outcome] || end.outcome;
  return `${count}${outcome} in ${end.duration_ms} ms${end.restarted ? ', restarted' : ''}`;
}

/** Adds stream text to the cell's output, to the last block of that stream if it is last. */
function appendStream(output, stream, text) {
  let block = output.lastElementChild;
  if (!block || block.dataset.stream !== stream) {
    block = h('pre', { class: `notebook-stream notebook-${stream}`, dataset: { stream } });
    output.append(block);
  }
  block.append(document.createTextNode(text));
}

/** One result's richest form this page can show safely. */
function resultView(data) {
  const image = IMAGE_TYPES.find((type) => typeof data[type] === 'string');
  if (image) {
    // Base64 only (the data: URL cannot carry anything else); whitespace from the kernel dropped.
    const base64 = data[image].replace(/\s+/g, '');
    if (/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) {
      return h('img', { class: 'notebook-image', alt: typeof data['text/plain'] === 'string' ? data['text/plain'].slice(0, 200) : 'a result image', src: `data:${image};base64,${base64}` });
    }
  }
  if (typeof data['text/html'] === 'string' && framePolicy) return htmlFrame(data['text/html']);
  if (typeof data['image/svg+xml'] === 'string' && framePolicy) return htmlFrame(data['image/svg+xml']);
  const text = data['text/plain'] ?? data['text/markdown'] ?? data['text/latex'] ?? (data['application/json'] !== undefined ? JSON.stringify(data['application/json'], null, 2) : '');
  return h('pre', { class: 'notebook-stream notebook-result' }, String(text));
}

/** HTML in a frame that may do nothing: no scripts, an opaque origin, no forms or popups. */
function htmlFrame(html) {
  const frame = h('iframe', { class: 'notebook-html', sandbox: '', referrerpolicy: 'no-referrer', title: 'HTML result' });
  const styled = html.replace(/<style\b/gi, `<style nonce="${styleNonce}"`);
  frame.srcdoc = framePolicy.createHTML(
    `<!doctype html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${FRAME_POLICY}">${styled}`,
  );
  // Sized for its table's rows (a frame's own height cannot be read from here); resizable.
  const rows = (html.match(/<tr\b/gi) || []).length;
  frame.style.height = `${3 + 1.75 * Math.min(FRAME_ROWS.max, Math.max(FRAME_ROWS.min, rows))}em`;
  return frame;
}

function errorView(error) {
  const traceback = stripAnsi((error.traceback || []).join('\n'));
  return h(
    'div',
    { class: 'notebook-error', role: 'alert' },
    h('p', { class: 'notebook-error-title' }, h('strong', null, stripAnsi(error.name || 'Error')), `: ${stripAnsi(error.value || '')}`),
    traceback ? h('pre', { class: 'notebook-stream notebook-traceback' }, traceback) : null,
  );
}
