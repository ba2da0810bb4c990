// The session's files: browse directories, open a file (text with line numbers, images
// shown, anything else described), edit a text file and save it (the service's atomic write),
// make a file or a folder, rename, download, upload (within the policy's cap) and delete.
// File names and contents come from the sandbox and are shown as text, whatever they contain.

import { request, sendJSON, sessionPath, upload } from './api.js';
import { confirmButton, h, icon, saveBlob, scrollHint, setText, show } from './dom.js';
import * as fmt from './format.js';
import { store } from './store.js';
import { errorText } from './sessions.js';
import { FileViewer } from './viewer.js';

const HOME = '/workspace';
const places = new Map(); // session id -> last directory shown

export class FilesView {
  constructor(id) {
    this.id = id;
    this.path = places.get(id) || HOME;
    this.active = false;
    this.ended = false;
    this.generation = 0;
  }

  mount(pane) {
    this.pathInput = h('input', { class: 'path-input mono', type: 'text', spellcheck: 'false', autocomplete: 'off', 'aria-label': 'Directory' });
    const go = h('form', { class: 'path-form' }, this.pathInput);
    go.addEventListener('submit', (event) => {
      event.preventDefault();
      this.open(this.pathInput.value.trim() || HOME);
    });
    this.upButton = h('button', { type: 'button', class: 'btn btn-small btn-icon', title: 'Parent directory', 'aria-label': 'Parent directory', onclick: () => this.open(parent(this.path)) }, icon('up'));
    const refresh = h('button', { type: 'button', class: 'btn btn-small btn-icon', title: 'Refresh', 'aria-label': 'Refresh', onclick: () => this.open(this.path) }, icon('refresh'));
    this.fileInput = h('input', { type: 'file', multiple: true, class: 'visually-hidden', tabindex: '-1', 'aria-hidden': 'true' });
    this.fileInput.addEventListener('change', () => {
      const files = [...this.fileInput.files];
      this.fileInput.value = '';
      this.uploadAll(files);
    });
    this.uploadButton = h('button', { type: 'button', class: 'btn btn-small btn-primary', onclick: () => this.fileInput.click() }, icon('upload'), 'Upload');
    this.newFileButton = h('button', { type: 'button', class: 'btn btn-small', onclick: () => this.ask('New file', '', (name) => this.createFile(name)) }, 'New file');
    this.newFolderButton = h('button', { type: 'button', class: 'btn btn-small', onclick: () => this.ask('New folder', '', (name) => this.createFolder(name)) }, 'New folder');
    this.nameInput = h('input', { class: 'path-input mono', type: 'text', spellcheck: 'false', autocomplete: 'off', 'aria-label': 'Name' });
    this.nameLabel = h('span', { class: 'field-label' });
    this.nameForm = h('form', { class: 'name-form', hidden: true }, this.nameLabel, this.nameInput, h('button', { type: 'submit', class: 'btn btn-small btn-primary' }, 'OK'), h('button', { type: 'button', class: 'btn btn-small btn-ghost', onclick: () => show(this.nameForm, false) }, 'Cancel'));
    this.nameForm.addEventListener('submit', (event) => {
      event.preventDefault();
      const name = this.nameInput.value.trim();
      show(this.nameForm, false);
      if (name && this.nameAction) this.nameAction(name);
    });
    this.viewer = new FileViewer(this.id, {
      error: (error) => this.showError(error),
      saved: () => this.open(this.path),
      download: (path, name, button) => this.download(path, name, button),
    });
    this.cap = h('span', { class: 'files-cap muted' });
    this.status = h('p', { class: 'files-status', role: 'status', 'aria-live': 'polite' });
    this.error = h('p', { class: 'alert alert-error', role: 'alert', hidden: true });
    this.body = h('tbody');
    this.table = h(
      'table',
      { class: 'table files-table' },
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col', class: 'num' }, 'Size'), h('th', { scope: 'col' }, 'Modified'), h('th', { scope: 'col' }, 'Mode'), h('th', { scope: 'col', class: 'actions-col' }, 'Actions'))),
      this.body,
    );
    this.empty = h('div', { class: 'empty empty-small', hidden: true }, h('p', { class: 'empty-title' }, 'This directory is empty.'), h('p', { class: 'muted' }, 'Upload a file, or drop one here.'));
    this.drop = h('div', { class: 'drop' }, h('div', { class: 'table-wrap' }, this.table), this.empty, h('div', { class: 'drop-hint' }, icon('upload'), 'Drop files to upload them here'));
    for (const type of ['dragenter', 'dragover']) {
      this.drop.addEventListener(type, (event) => {
        if (this.ended || !event.dataTransfer || ![...event.dataTransfer.types].includes('Files')) return;
        event.preventDefault();
        this.drop.classList.add('dragging');
      });
    }
    this.drop.addEventListener('dragleave', (event) => {
      if (!this.drop.contains(event.relatedTarget)) this.drop.classList.remove('dragging');
    });
    this.drop.addEventListener('drop', (event) => {
      event.preventDefault();
      this.drop.classList.remove('dragging');
      if (!this.ended && event.dataTransfer) this.uploadAll([...event.dataTransfer.files]);
    });
    this.uploads = h('ul', { class: 'uploads' });
    pane.append(
      h(
        'section',
        { class: 'card files', 'aria-label': 'Files' },
        h('header', { class: 'files-bar' }, this.upButton, go, refresh, h('span', { class: 'files-actions' }, this.newFileButton, this.newFolderButton, this.uploadButton), this.fileInput),
        h('div', { class: 'files-sub' }, this.cap, this.status),
        this.nameForm,
        this.error,
        this.uploads,
        this.viewer.element,
        this.drop,
      ),
    );
    scrollHint(this.drop.firstElementChild);
    this.renderCap();
    store.on('policy', () => this.renderCap());
  }

  renderCap() {
    const policy = store.policy;
    setText(this.cap, policy ? `Uploads up to ${fmt.bytes(policy.max_upload_bytes)} each (service policy). Paths are inside the sandbox; ${HOME} is its working directory.` : '');
  }

  /** Each time the tab is shown, the listing is read again: an agent may have changed it. */
  setActive(active) {
    if (active && !this.active) this.open(this.path);
    this.active = active;
  }

  setEnded(ended) {
    this.ended = ended;
    for (const button of [this.uploadButton, this.newFileButton, this.newFolderButton]) button.disabled = ended;
    this.viewer.setEnded(ended);
    if (ended) {
      show(this.error, false);
      show(this.table, false);
      show(this.empty, false);
      setText(this.status, 'The session has ended: its files are gone with its sandbox.');
    }
  }

  showError(error) {
    if (this.ended) return;
    setText(this.error, errorText(error));
    show(this.error);
  }

  /** Asks for a name in a small form above the listing, then calls `action(name)`. */
  ask(label, initial, action) {
    setText(this.nameLabel, label);
    this.nameInput.value = initial;
    this.nameAction = action;
    show(this.nameForm);
    this.nameInput.focus();
    this.nameInput.select();
  }

  async createFile(name) {
    const path = join(this.path, name);
    show(this.error, false);
    try {
      await request('PUT', sessionPath(this.id, `/files/content?path=${encodeURIComponent(path)}`), { body: '' });
      await this.open(this.path);
      this.viewer.open(path, name, 0, { edit: true });
    } catch (error) {
      this.showError(error);
    }
  }

  async createFolder(name) {
    show(this.error, false);
    try {
      await sendJSON('POST', sessionPath(this.id, '/files/mkdir'), { path: join(this.path, name) });
    } catch (error) {
      this.showError(error);
    }
    this.open(this.path);
  }

  async rename(path, name) {
    show(this.error, false);
    const to = join(parent(path), name);
    try {
      await sendJSON('POST', sessionPath(this.id, '/files/move'), { from: path, to });
      if (this.viewer.path === path) this.viewer.close();
    } catch (error) {
      this.showError(error);
    }
    this.open(this.path);
  }

  async open(path) {
    const generation = ++this.generation;
    this.pathInput.value = path;
    show(this.error, false);
    setText(this.status, 'Loading…');
    try {
      const response = await request('GET', sessionPath(this.id, `/files?path=${encodeURIComponent(path)}`));
      const listing = await response.json();
      if (generation !== this.generation) return;
      this.path = path;
      places.set(this.id, path);
      this.render(listing);
    } catch (error) {
      if (generation !== this.generation) return;
      setText(this.status, this.ended ? 'The session has ended: its files are gone with its sandbox.' : '');
      this.showError(error);
    }
    this.upButton.disabled = this.path === '/';
  }

  render(listing) {
    const entries = listing.entries.slice().sort((a, b) => (a.type === 'dir') === (b.type === 'dir') ? a.name.localeCompare(b.name) : a.type === 'dir' ? -1 : 1);
    this.body.replaceChildren(...entries.map((entry) => this.row(entry)));
    show(this.table, entries.length > 0);
    show(this.empty, entries.length === 0);
    const count = `${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}`;
    setText(this.status, listing.truncated ? `${count} shown; the directory holds more` : count);
  }

  row(entry) {
    const path = join(this.path, entry.name);
    const isDir = entry.type === 'dir';
    const click = (event) => {
      event.preventDefault();
      if (entry.type === 'file') this.viewer.open(path, entry.name, entry.size);
      else if (entry.type === 'symlink') this.follow(path);
      else this.open(path);
    };
    const name = entry.type === 'other'
      ? h('span', { class: 'file-name', title: path }, entry.name)
      : h('a', { href: '#', class: 'file-name', title: entry.type === 'file' ? `Open ${path}` : path, onclick: click }, entry.name);
    const actions = h('td', { class: 'actions' });
    if (entry.type === 'file') {
      actions.append(h('button', { type: 'button', class: 'btn btn-small', 'aria-label': `Download ${entry.name}`, onclick: (event) => this.download(path, entry.name, event.currentTarget) }, icon('download'), 'Download'));
    }
    if (!this.ended) {
      actions.append(
        h('button', { type: 'button', class: 'btn btn-small btn-ghost', 'aria-label': `Rename ${entry.name}`, onclick: () => this.ask(`Rename ${entry.name} to`, entry.name, (to) => this.rename(path, to)) }, 'Rename'),
        confirmButton('Delete', isDir ? 'Delete it all?' : 'Really delete?', () => this.remove(path, isDir), { 'aria-label': `Delete ${entry.name}` }),
      );
    }
    return h(
      'tr',
      { dataset: { name: entry.name, type: entry.type } },
      h('td', null, h('div', { class: 'name-cell' }, icon(isDir ? 'folder' : entry.type === 'symlink' ? 'link' : entry.type === 'file' ? 'file' : 'other'), name, linkLeadsTo(entry))),
      h('td', { class: 'num' }, isDir ? '—' : fmt.bytes(entry.size)),
      h('td', { class: 'nowrap', title: entry.modified || null }, fmt.dateTime(entry.modified)),
      h('td', { class: 'mono muted' }, entry.mode),
      actions,
    );
  }

  /** Opens what a symlink leads to (resolved in the sandbox): a directory here, a file in the viewer. */
  async follow(path) {
    show(this.error, false);
    try {
      const link = await (await request('GET', sessionPath(this.id, `/files/stat?path=${encodeURIComponent(path)}`))).json();
      if (link.target_type === 'dir') return this.open(link.target_path);
      if (link.target_type !== 'file') {
        setText(this.status, `${link.name} → ${link.symlink_target}: it leads nowhere.`);
        return;
      }
      const target = await (await request('GET', sessionPath(this.id, `/files/stat?path=${encodeURIComponent(link.target_path)}`))).json();
      await this.viewer.open(link.target_path, target.name, target.size);
      setText(this.status, `${link.name} → ${link.symlink_target}`);
    } catch (error) {
      this.showError(error);
    }
  }

  async download(path, name, button) {
    button.disabled = true;
    show(this.error, false);
    setText(this.status, `Downloading ${name}…`);
    try {
      const response = await request('GET', sessionPath(this.id, `/files/content?path=${encodeURIComponent(path)}`));
      const blob = await response.blob();
      saveBlob(blob, name);
      setText(this.status, `Downloaded ${name} (${fmt.bytes(blob.size)}).`);
    } catch (error) {
      setText(this.status, '');
      this.showError(error);
    } finally {
      button.disabled = false;
      window.dispatchEvent(new CustomEvent('sandboxd:activity', { detail: { session: this.id } }));
    }
  }

  async remove(path, recursive) {
    show(this.error, false);
    try {
      const query = `?path=${encodeURIComponent(path)}${recursive ? '&recursive=true' : ''}`;
      await request('DELETE', sessionPath(this.id, `/files${query}`));
      if (this.viewer.path === path) this.viewer.close();
    } catch (error) {
      this.showError(error);
    }
    window.dispatchEvent(new CustomEvent('sandboxd:activity', { detail: { session: this.id } }));
    this.open(this.path);
  }

  async uploadAll(files) {
    const cap = store.policy ? store.policy.max_upload_bytes : Infinity;
    const dir = this.path;
    for (const file of files) {
      const progress = h('progress', { max: '100', value: '0' });
      const label = h('span', { class: 'upload-state' }, 'uploading…');
      const item = h('li', { class: 'upload' }, h('span', { class: 'upload-name' }, file.name), h('span', { class: 'muted' }, fmt.bytes(file.size)), progress, label);
      this.uploads.append(item);
      if (file.size > cap) {
        progress.remove();
        item.classList.add('failed');
        setText(label, `refused: larger than the ${fmt.bytes(cap)} upload limit of the service policy`);
        setTimeout(() => item.remove(), 8000);
        continue;
      }
      try {
        const path = join(dir, file.name);
        await upload('PUT', sessionPath(this.id, `/files/content?path=${encodeURIComponent(path)}`), file, (loaded, total) => {
          progress.value = Math.round((loaded / total) * 100);
        });
        progress.value = 100;
        item.classList.add('done');
        setText(label, 'uploaded');
        setTimeout(() => item.remove(), 2500);
      } catch (error) {
        progress.remove();
        item.classList.add('failed');
        setText(label, errorText(error));
        setTimeout(() => item.remove(), 10000);
      }
      if (this.path === dir) this.open(dir);
    }
    window.dispatchEvent(new CustomEvent('sandboxd:activity', { detail: { session: this.id } }));
  }

  dispose() {
    this.generation += 1;
    this.viewer.close();
  }
}

/** A symlink's row says what it leads to (the listing follows it in the sandbox, not here). */
function linkLeadsTo(entry) {
  if (entry.type !== 'symlink') return null;
  const to = { file: 'a file', dir: 'a folder', other: 'a device, FIFO or socket' }[entry.target_type] || 'nowhere';
  return h('span', { class: 'muted link-target' }, ` → ${to}`);
}

function join(dir, name) {
  return dir.endsWith('/') ? `${dir}${name}` : `${dir}/${name}`;
}

function parent(path) {
  const trimmed = path.replace(/\/+$/, '');
  if (!trimmed.startsWith('/')) return trimmed.includes('/') ? trimmed.slice(0, trimmed.lastIndexOf('/')) || '.' : '/';
  const index = trimmed.lastIndexOf('/');
  return index <= 0 ? '/' : trimmed.slice(0, index);
}
