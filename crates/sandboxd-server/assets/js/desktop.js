// The session's Screen pane, for desktop sessions: the screen live, drawn by noVNC's RFB client
// over the service's live-view WebSocket (`GET .../computer/view`, opened with a single-use
// ticket like the shell's). View-only until "Take over" is switched on; the service enforces
// it (it drops the page's input while view-only), this page only mirrors it. Taking over and
// giving back are text messages on the same socket, so they stay in order with the input.
// Record starts ffmpeg on the screen in the sandbox (POST .../computer/recording); Stop ends it.

import RFB from '../vendor/novnc/rfb.mjs';
import { api, sessionPath, websocket } from './api.js';
import { h, setText, show } from './dom.js';
import * as fmt from './format.js';
import { errorText } from './sessions.js';
import { store } from './store.js';

export class DesktopView {
  constructor(id) {
    this.id = id;
    this.active = false;
    this.ended = false;
    this.desktop = false;
    this.socket = null;
    this.rfb = null;
    this.opening = false;
    this.recording = null;
  }

  mount(pane) {
    this.stateLabel = h('span', { class: 'shell-state screen-state', dataset: { state: 'idle' } }, 'not connected');
    this.takeOverSwitch = h('input', { type: 'checkbox', role: 'switch', class: 'take-over', disabled: true, 'aria-label': 'Take over the keyboard and mouse' });
    this.takeOverSwitch.addEventListener('change', () => this.setControl(this.takeOverSwitch.checked));
    this.connectButton = h('button', { type: 'button', class: 'btn btn-small btn-primary', onclick: () => this.toggle() }, 'Connect');
    // Recording goes on in the sandbox whether or not the view is open.
    this.recordButton = h('button', { type: 'button', class: 'btn btn-small btn-ghost record', title: 'Record the screen to a video file in the sandbox', onclick: () => this.toggleRecording() }, 'Record');
    this.recordNote = h('p', { class: 'alert alert-info record-note', role: 'status', hidden: true });
    this.screen = h('div', { class: 'screen-view', 'aria-label': 'The desktop\u2019s screen' });
    this.error = h('p', { class: 'alert alert-error', role: 'alert', hidden: true });
    this.noDesktop = h(
      'p',
      { class: 'empty empty-small', hidden: true },
      'This session\u2019s runtime has no desktop: open a session of a runtime built from the desktop recipe (the embedded default\u2019s desktop) to see its screen here.',
    );
    this.body = h(
      'section',
      { class: 'term screen', 'aria-label': 'Screen' },
      h(
        'header',
        { class: 'term-head' },
        h('h3', null, 'Screen'),
        this.stateLabel,
        h('span', { class: 'spacer' }),
        h('label', { class: 'take-over-label' }, this.takeOverSwitch, 'Take over'),
        this.recordButton,
        this.connectButton,
      ),
      h('p', { class: 'term-note' }, 'The desktop live. View-only: nothing you do here reaches it until you switch Take over on; then your keyboard and mouse act on it beside the agent. Both are in the activity log.'),
      this.screen,
    );
    pane.append(this.error, this.recordNote, this.noDesktop, this.body);
  }

  /** Called with every refresh of the session: connects only when the pane first learns it shows a desktop. */
  setRuntime(runtime) {
    if (!runtime) return;
    const known = this.desktop;
    this.desktop = store.isDesktop(runtime.name);
    show(this.noDesktop, !this.desktop);
    show(this.body, this.desktop);
    if (this.desktop && !known) this.setActive(this.active);
  }

  setActive(active) {
    this.active = active;
    if (active && this.desktop && !this.ended && !this.socket && !this.opening) this.connect();
    // A hidden view is closed: it costs the sandbox an encoder, and control goes back.
    if (!active && (this.socket || this.opening)) this.disconnect();
  }

  setEnded(ended) {
    this.ended = ended;
    this.connectButton.disabled = ended;
    this.recordButton.disabled = ended;
    if (ended) this.disconnect();
  }

  toggle() {
    if (this.socket || this.opening) this.disconnect();
    else this.connect();
  }

  setState(state, text) {
    this.stateLabel.dataset.state = state;
    setText(this.stateLabel, text);
    setText(this.connectButton, state === 'idle' || state === 'error' ? 'Connect' : 'Disconnect');
    this.takeOverSwitch.disabled = state !== 'connected';
    if (state !== 'connected') this.takeOverSwitch.checked = false;
    this.screen.dataset.state = state;
  }

  async connect() {
    this.opening = true;
    show(this.error, false);
    this.setState('connecting', 'connecting…');
    let socket;
    try {
      socket = await websocket(this.id, '/computer/view');
    } catch (error) {
      this.opening = false;
      this.fail(errorText(error));
      return;
    }
    this.opening = false;
    if (!this.active || this.ended) {
      socket.close();
      this.setState('idle', 'not connected');
      return;
    }
    this.socket = socket;
    const rfb = new RFB(this.screen, socket, { shared: true });
    rfb.viewOnly = true;
    rfb.scaleViewport = true;
    rfb.focusOnClick = false;
    rfb.addEventListener('connect', () => this.setState('connected', 'view-only'));
    rfb.addEventListener('disconnect', (event) => {
      if (this.rfb !== rfb) return;
      this.rfb = null;
      this.socket = null;
      if (event.detail.clean) this.setState('idle', 'not connected');
      else this.fail('The view was cut: the session ended, its desktop stopped, or the service refused a message. Connect again.');
    });
    this.rfb = rfb;
  }

  disconnect() {
    const rfb = this.rfb;
    this.rfb = null;
    this.socket = null;
    if (rfb) rfb.disconnect();
    this.setState('idle', 'not connected');
  }

  fail(text) {
    setText(this.error, text);
    show(this.error);
    this.setState('error', 'not connected');
  }

  /** Takes over (the service delivers input from now on) or gives back (it drops it again). */
  setControl(control) {
    if (!this.rfb || !this.socket) return;
    if (control) {
      this.socket.send(JSON.stringify({ type: 'take_over' }));
      this.rfb.viewOnly = false;
      this.rfb.focus();
      setText(this.stateLabel, 'you have control');
    } else {
      // The page stops sending first; the service then releases what is still held.
      this.rfb.viewOnly = true;
      this.socket.send(JSON.stringify({ type: 'give_back' }));
      setText(this.stateLabel, 'view-only');
    }
    this.screen.classList.toggle('in-control', control);
  }

  /** Starts a recording of the screen (a file in the sandbox), or stops the one this pane started. */
  async toggleRecording() {
    const stop = this.recording;
    this.recordButton.disabled = true;
    try {
      const path = sessionPath(this.id, '/computer/recording');
      if (stop) {
        const done = await api.delete(path);
        this.recording = null;
        setText(this.recordNote, `Recorded ${done.path} (${fmt.bytes(done.bytes)}); download it from the Files tab.`);
      } else {
        this.recording = await api.post(path, {});
        setText(this.recordNote, `Recording the screen to ${this.recording.path}…`);
      }
      show(this.recordNote);
      show(this.error, false);
    } catch (error) {
      // Started elsewhere (the API, another tab) or already stopped: the button follows.
      if (error.code === 'recording_running') this.recording = {};
      if (error.code === 'no_recording') this.recording = null;
      setText(this.error, errorText(error));
      show(this.error);
    } finally {
      this.recordButton.disabled = this.ended;
      setText(this.recordButton, this.recording ? 'Stop recording' : 'Record');
      this.recordButton.classList.toggle('recording', Boolean(this.recording));
    }
  }

  dispose() {
    this.disconnect();
  }
}
