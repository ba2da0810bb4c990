// One file of a session, opened in the page: text with line numbers (paged: a large file is
// read a page at a time, never held whole), an image shown, anything else described by its
// size and type with a download. A text file that fits one page can be edited and saved with
// the service's atomic write (hidden temp file, fsync, rename), then is read back.

import { request, sessionPath } from './api.js';
import { h, setText, show } from './dom.js';
import * as fmt from './format.js';

/** A text page: what is read and shown of a file at once. */
const PAGE_BYTES = 256 * 1024;
/** The largest image shown (it is read whole to be drawn). */
const MAX_IMAGE_BYTES = 16 << 20;
/** The bytes looked at to tell text from binary. */
const SNIFF_BYTES = 8192;

const IMAGE_TYPES = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp',
  bmp: 'image/bmp', ico: 'image/x-icon', avif: 'image/avif', svg: 'image/svg+xml',
};

export class FileViewer {
  constructor(id, { error, saved, download }) {
    this.id = id;
    this.onError = error;
    this.onSaved = saved;
    this.onDownload = download;
    this.path = null;
    this.generation = 0;
    this.objectUrl = null;
    this.title = h('h3', { class: 'viewer-title mono' });
    this.facts = h('span', { class: 'viewer-facts muted' });
    this.editButton = h('button', { type: 'button', class: 'btn btn-small', hidden: true, onclick: () => this.edit() }, 'Edit');
    this.saveButton = h('button', { type: 'button', class: 'btn btn-small btn-primary', hidden: true, onclick: () => this.save() }, 'Save');
    this.cancelButton = h('button', { type: 'button', class: 'btn btn-small btn-ghost', hidden: true, onclick: () => this.show(this.text) }, 'Cancel');
    this.downloadButton = h('button', { type: 'button', class: 'btn btn-small', onclick: () => this.download() }, 'Download');
    this.closeButton = h('button', { type: 'button', class: 'btn btn-small btn-ghost', 'aria-label': 'Close the file', onclick: () => this.close() }, 'Close');
    this.prev = h('button', { type: 'button', class: 'btn btn-small', onclick: () => this.page(this.offset - PAGE_BYTES) }, '← Previous page');
    this.next = h('button', { type: 'button', class: 'btn btn-small', onclick: () => this.page(this.offset + PAGE_BYTES) }, 'Next page →');
    this.pageText = h('span', { class: 'muted' });
    this.pager = h('div', { class: 'viewer-pager', hidden: true }, this.prev, this.pageText, this.next);
    this.status = h('p', { class: 'viewer-status', role: 'status', 'aria-live': 'polite' });
    this.body = h('div', { class: 'viewer-body' });
    this.element = h(
      'section',
      { class: 'viewer', hidden: true, 'aria-label': 'File' },
      h('header', { class: 'viewer-head' }, h('div', { class: 'viewer-name' }, this.title, this.facts), h('span', { class: 'spacer' }), this.editButton, this.saveButton, this.cancelButton, this.downloadButton, this.closeButton),
      this.pager,
      this.status,
      this.body,
    );
  }

  setEnded(ended) {
    this.ended = ended;
    if (ended) this.close();
  }

  /** Opens `path` (`size` bytes as listed); `edit` goes straight to the editor for text. */
  async open(path, name, size, { edit = false } = {}) {
    this.close();
    this.path = path;
    this.name = name;
    this.size = size;
    this.offset = 0;
    setText(this.title, path);
    show(this.element);
    const kind = imageType(name);
    if (kind && size <= MAX_IMAGE_BYTES) await this.showImage(kind);
    else await this.page(0);
    if (edit && this.text !== null && this.text !== undefined) this.edit();
    this.element.scrollIntoView({ block: 'nearest' });
  }

  /** Reads and shows the page of text at `offset`, or says what kind of file it is. */
  async page(offset) {
    const generation = ++this.generation;
    this.offset = Math.max(0, offset);
    setText(this.status, 'Loading…');
    try {
      const { bytes, total } = await readRange(this.id, this.path, this.offset, PAGE_BYTES);
      if (generation !== this.generation) return;
      if (total !== null) this.size = total;
      const text = this.offset === 0 ? asText(bytes) : asText(bytes, true);
      if (text === null) {
        this.describe(bytes);
        return;
      }
      this.text = this.offset === 0 && this.size <= PAGE_BYTES ? text : null;
      this.show(text);
      const paged = this.size > PAGE_BYTES;
      show(this.pager, paged);
      if (paged) {
        const end = Math.min(this.size, this.offset + bytes.length);
        setText(this.pageText, `bytes ${fmt.count(this.offset)}–${fmt.count(end)} of ${fmt.count(this.size)} (${fmt.bytes(this.size)}), one page of ${fmt.bytes(PAGE_BYTES)} at a time`);
        this.prev.disabled = this.offset === 0;
        this.next.disabled = end >= this.size;
      }
      setText(this.facts, `${fmt.bytes(this.size)} · text`);
      setText(this.status, paged ? 'A large file: only this page is read. Editing needs a file of one page at most.' : '');
    } catch (error) {
      if (generation !== this.generation) return;
      setText(this.status, '');
      this.onError(error);
    }
  }

  /** Text with line numbers; the numbers count from the page's first line. */
  show(text) {
    const lines = text.split('\n');
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    const first = this.offset === 0 ? 1 : null;
    const numbers = lines.map((_, i) => (first ? String(first + i) : '·')).join('\n');
    this.body.replaceChildren(
      h('div', { class: 'viewer-text' }, h('pre', { class: 'viewer-lines', 'aria-hidden': 'true' }, numbers), h('pre', { class: 'viewer-code', tabindex: '0' }, lines.join('\n'))),
    );
    this.editButton.hidden = this.text === null || this.ended;
    this.saveButton.hidden = true;
    this.cancelButton.hidden = true;
  }

  async showImage(type) {
    const generation = ++this.generation;
    setText(this.status, 'Loading…');
    try {
      const response = await request('GET', sessionPath(this.id, `/files/content?path=${encodeURIComponent(this.path)}`));
      const blob = new Blob([await response.arrayBuffer()], { type });
      if (generation !== this.generation) return;
      this.objectUrl = URL.createObjectURL(blob);
      const image = h('img', { class: 'viewer-image', alt: `The image ${this.name}`, src: this.objectUrl });
      image.addEventListener('load', () => setText(this.facts, `${fmt.bytes(blob.size)} · ${type} · ${image.naturalWidth} × ${image.naturalHeight}`));
      image.addEventListener('error', () => setText(this.status, 'This file could not be drawn as an image.'));
      this.body.replaceChildren(image);
      setText(this.facts, `${fmt.bytes(blob.size)} · ${type}`);
      setText(this.status, '');
    } catch (error) {
      if (generation !== this.generation) return;
      setText(this.status, '');
      this.onError(error);
    }
  }

  describe(bytes) {
    const type = guessType(this.name, bytes);
    setText(this.facts, `${fmt.bytes(this.size)} · ${type}`);
    setText(this.status, '');
    this.body.replaceChildren(h('p', { class: 'viewer-binary' }, `Not text: ${fmt.bytes(this.size)} of ${type}. Download it to open it with a program of your own.`));
  }

  edit() {
    if (this.text === null || this.ended) return;
    this.editor = h('textarea', { class: 'viewer-editor', spellcheck: 'false', autocomplete: 'off', autocapitalize: 'off', wrap: 'off', 'aria-label': `Edit ${this.name}` });
    this.editor.value = this.text;
    this.body.replaceChildren(this.editor);
    this.editButton.hidden = true;
    this.saveButton.hidden = false;
    this.cancelButton.hidden = false;
    show(this.pager, false);
    this.editor.focus();
  }

  async save() {
    const text = this.editor.value;
    this.saveButton.disabled = true;
    setText(this.status, 'Saving…');
    try {
      const written = await request('PUT', sessionPath(this.id, `/files/content?path=${encodeURIComponent(this.path)}`), {
        body: new Blob([text]),
        headers: { 'Content-Type': 'application/octet-stream' },
      }).then((r) => r.json());
      this.size = written.bytes;
      // Read back, so what is shown is what the sandbox holds.
      await this.page(0);
      setText(this.status, `Saved ${fmt.bytes(written.bytes)} (written whole, then put in place).`);
      this.onSaved();
    } catch (error) {
      setText(this.status, '');
      this.onError(error);
    } finally {
      this.saveButton.disabled = false;
    }
  }

  download() {
    this.onDownload(this.path, this.name, this.downloadButton);
  }

  close() {
    this.generation += 1;
    this.path = null;
    this.text = null;
    if (this.objectUrl) URL.revokeObjectURL(this.objectUrl);
    this.objectUrl = null;
    this.body.replaceChildren();
    for (const button of [this.editButton, this.saveButton, this.cancelButton]) button.hidden = true;
    show(this.pager, false);
    setText(this.facts, '');
    setText(this.status, '');
    show(this.element, false);
  }
}

/**
 * Reads `length` bytes of a file from `offset`: the answer is streamed and only that window
 * is held; the rest is passed over and the read stops after it.
 */
async function readRange(id, path, offset, length) {
  const response = await request('GET', sessionPath(id, `/files/content?path=${encodeURIComponent(path)}`));
  const announced = response.headers.get('Content-Length');
  const total = announced !== null ? Number(announced) : null;
  const reader = response.body.getReader();
  const out = new Uint8Array(length);
  let filled = 0;
  let position = 0;
  try {
    while (filled < length) {
      const { value, done } = await reader.read();
      if (done) break;
      const start = Math.max(0, offset - position);
      if (start < value.length) {
        const piece = value.subarray(start, Math.min(value.length, start + length - filled));
        out.set(piece, filled);
        filled += piece.length;
      }
      position += value.length;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  return { bytes: out.subarray(0, filled), total };
}

/** The bytes as text, or null when they look binary (a NUL, or not UTF-8). */
function asText(bytes, midFile = false) {
  if (bytes.subarray(0, SNIFF_BYTES).includes(0)) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true });
  } catch {
    // A page boundary may cut a character; inside a file, replace what does not decode.
    return midFile ? new TextDecoder('utf-8').decode(bytes) : null;
  }
}

function imageType(name) {
  const extension = String(name).split('.').pop().toLowerCase();
  return IMAGE_TYPES[extension] || null;
}

function guessType(name, bytes) {
  const starts = (...sig) => sig.every((b, i) => bytes[i] === b);
  if (starts(0x7f, 0x45, 0x4c, 0x46)) return 'an executable (ELF)';
  if (starts(0x50, 0x4b, 0x03, 0x04)) return 'a zip archive';
  if (starts(0x1f, 0x8b)) return 'gzip data';
  if (starts(0x25, 0x50, 0x44, 0x46)) return 'a PDF document';
  const extension = String(name).includes('.') ? String(name).split('.').pop() : '';
  return extension ? `binary data (.${extension})` : 'binary data';
}
