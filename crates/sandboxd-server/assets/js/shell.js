// The session's interactive shell: a terminal (PTY) in the sandbox over a WebSocket, drawn
// with xterm.js. Binary frames carry the terminal's bytes both ways; text frames carry
// {"type":"resize","cols","rows"} from here and a final {"type":"exit", ...} from the service.
// The socket presents a single-use ticket fetched just before (see api.js), never the token,
// and nothing in the URL.

import { Terminal } from '../vendor/xterm/xterm.mjs';
import { FitAddon } from '../vendor/xterm/addon-fit.mjs';
import { websocket } from './api.js';
import { h, setText } from './dom.js';

const THEME = {
  background: '#0f141a',
  foreground: '#e6edf3',
  cursor: '#7ee0a3',
  cursorAccent: '#0f141a',
  selectionBackground: '#35507a',
  black: '#1b222c',
  red: '#ff7b72',
  green: '#7ee787',
  yellow: '#e3b341',
  blue: '#79c0ff',
  magenta: '#d2a8ff',
  cyan: '#56d4dd',
  white: '#c9d1d9',
  brightBlack: '#6e7681',
  brightRed: '#ffa198',
  brightGreen: '#a5f0b0',
  brightYellow: '#f2cc60',
  brightBlue: '#a5d6ff',
  brightMagenta: '#e2c5ff',
  brightCyan: '#87e8ee',
  brightWhite: '#f0f6fc',
};

export class ShellView {
  constructor(id) {
    this.id = id;
    this.socket = null;
    this.term = null;
    this.active = false;
    this.ended = false;
    this.started = false;
    this.pending = null;
    this.state = 'idle';
  }

  mount(pane) {
    this.stateLabel = h('span', { class: 'shell-state', dataset: { state: 'idle' } }, 'not connected');
    this.connectButton = h('button', { type: 'button', class: 'btn btn-small btn-primary', onclick: () => this.toggle() }, 'Connect');
    this.screen = h('div', { class: 'shell-screen', 'aria-label': 'Interactive shell' });
    pane.append(
      h(
        'section',
        { class: 'term shell', 'aria-label': 'Interactive shell' },
        h('header', { class: 'term-head' }, h('h3', null, 'Shell'), this.stateLabel, h('span', { class: 'spacer' }), this.connectButton),
        h('p', { class: 'term-note' }, 'A real terminal in the sandbox: one shell that keeps its working directory and environment between commands. Disconnecting hangs it up.'),
        this.screen,
      ),
    );
    this.resizeObserver = new ResizeObserver(() => this.fit());
    this.resizeObserver.observe(this.screen);
  }

  setActive(active) {
    this.active = active;
    if (!active) return;
    if (!this.term) this.createTerminal();
    requestAnimationFrame(() => {
      this.fit();
      if (!this.started && !this.ended) this.connect();
      this.term.focus();
    });
  }

  setEnded(ended) {
    this.ended = ended;
    this.connectButton.disabled = ended && !this.socket && !this.pending;
    if (ended && (this.socket || this.pending)) this.disconnect();
  }

  createTerminal() {
    this.term = new Terminal({
      theme: THEME,
      fontFamily: 'ui-monospace, "SFMono-Regular", "JetBrains Mono", Menlo, Consolas, "DejaVu Sans Mono", "Liberation Mono", monospace',
      fontSize: 13,
      lineHeight: 1.15,
      cursorBlink: true,
      scrollback: 5000,
      convertEol: false,
      allowProposedApi: false,
    });
    this.fitAddon = new FitAddon();
    this.term.loadAddon(this.fitAddon);
    this.term.open(this.screen);
    const encoder = new TextEncoder();
    this.term.onData((data) => this.send(encoder.encode(data)));
    this.term.onBinary((data) => {
      const bytes = new Uint8Array(data.length);
      for (let i = 0; i < data.length; i += 1) bytes[i] = data.charCodeAt(i) & 0xff;
      this.send(bytes);
    });
    this.term.onResize(({ cols, rows }) => this.sendResize(cols, rows));
  }

  fit() {
    if (!this.term || !this.active || !this.screen.offsetParent) return;
    try {
      this.fitAddon.fit();
    } catch {
      // not laid out yet
    }
  }

  toggle() {
    if (this.socket || this.pending) this.disconnect();
    else this.connect();
  }

  setState(state, text) {
    this.state = state;
    this.stateLabel.dataset.state = state;
    setText(this.stateLabel, text);
    const busy = Boolean(this.socket || this.pending);
    setText(this.connectButton, busy ? 'Disconnect' : this.started ? 'Reconnect' : 'Connect');
    this.connectButton.classList.toggle('btn-primary', !busy);
    this.connectButton.classList.toggle('btn-ghost', busy);
    this.connectButton.disabled = this.ended && !busy;
  }

  async connect() {
    if (this.socket || this.pending || this.ended) return;
    if (!this.term) this.createTerminal();
    this.started = true;
    this.fit();
    const { cols, rows } = this.term;
    // Marks this attempt: a disconnect while the ticket is fetched abandons it.
    const pending = {};
    this.pending = pending;
    this.setState('connecting', 'connecting…');
    let socket;
    try {
      socket = await websocket(this.id, `/pty?cols=${cols}&rows=${rows}`);
    } catch (error) {
      if (this.pending !== pending) return;
      this.pending = null;
      this.term.write(`\r\n\x1b[31m[${String(error.message || error)}]\x1b[0m\r\n`);
      this.setState('error', 'could not connect');
      return;
    }
    if (this.pending !== pending) {
      socket.close(1000, 'closed by the user');
      return;
    }
    this.pending = null;
    socket.binaryType = 'arraybuffer';
    this.socket = socket;
    this.exitShown = false;
    socket.addEventListener('open', () => {
      if (socket !== this.socket) return;
      this.setState('connected', 'connected');
      this.sendResize(this.term.cols, this.term.rows);
      this.term.focus();
    });
    socket.addEventListener('message', (event) => {
      if (socket !== this.socket) return;
      if (typeof event.data === 'string') this.control(event.data);
      else this.term.write(new Uint8Array(event.data));
    });
    socket.addEventListener('close', (event) => {
      if (socket !== this.socket) return;
      this.socket = null;
      if (!this.exitShown) {
        const why = event.code === 1000 || event.code === 1005 ? 'the connection closed' : `the connection closed (${event.code}${event.reason ? `: ${event.reason}` : ''})`;
        this.term.write(`\r\n\x1b[2m[${why}]\x1b[0m\r\n`);
      }
      this.setState(this.exitShown ? 'exited' : 'closed', this.exitShown ? 'exited' : 'disconnected');
    });
    socket.addEventListener('error', () => {
      if (socket !== this.socket) return;
      this.setState('error', 'could not connect');
    });
  }

  control(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message.type === 'exit') {
      this.exitShown = true;
      const code = message.exit_code ?? message.code;
      const detail = code !== undefined && code !== null ? `exit ${code}` : message.signal ? `killed by signal ${message.signal}` : 'ended';
      this.term.write(`\r\n\x1b[2m[the shell ended: ${detail}]\x1b[0m\r\n`);
    } else if (message.type === 'error') {
      this.exitShown = true;
      this.term.write(`\r\n\x1b[31m[${String(message.message || message.code || 'error')}]\x1b[0m\r\n`);
    }
  }

  send(bytes) {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) this.socket.send(bytes);
  }

  sendResize(cols, rows) {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) {
      this.socket.send(JSON.stringify({ type: 'resize', cols, rows }));
    }
  }

  disconnect() {
    const socket = this.socket;
    this.socket = null;
    this.pending = null;
    if (socket) socket.close(1000, 'closed by the user');
    if (this.term) this.term.write('\r\n\x1b[2m[disconnected]\x1b[0m\r\n');
    this.setState('closed', 'disconnected');
  }

  dispose() {
    this.pending = null;
    if (this.socket) {
      const socket = this.socket;
      this.socket = null;
      socket.close(1000, 'closed by the user');
    }
    this.resizeObserver?.disconnect();
    this.term?.dispose();
    this.term = null;
  }
}
