// One command's output on the page, bounded whatever comes: the first lines and the newest
// ones are shown, the lines between are counted ("N earlier lines not shown"), and drawing
// happens at most once per animation frame (less often while a flood goes on), never per
// chunk. What the page received is kept for a download up to a bound too: its start and its
// newest part, with what was cut between them said as cut.

import { h, saveBlob } from './dom.js';
import * as fmt from './format.js';

const HEAD_LINES = 100;
const TAIL_LINES = 1000;
/** A line longer than this is shown cut, with the number of characters left out. */
const MAX_LINE_CHARS = 4000;
/** What is kept for the download: the first HEAD_KEEP characters and the newest TAIL_KEEP. */
const HEAD_KEEP = 1 << 20;
const TAIL_KEEP = 4 << 20;
/** While output keeps coming, the screen is redrawn at most this often. */
const REDRAW_MS = 120;
/**
 * While more lines than this come between two draws (a flood no one can read), only this
 * many of the newest are drawn, and at most every FLOOD_REDRAW_MS: laying out and painting a
 * thousand fresh lines each time is what stalls the page, the more so on a busy machine.
 */
const FLOOD_LINES = 200;
const FLOOD_REDRAW_MS = 250;

export class OutputView {
  constructor() {
    this.head = []; // [{stream, text}], frozen once HEAD_LINES long
    this.tail = []; // the newest complete lines, at most TAIL_LINES
    this.hidden = 0; // lines between head and tail that are not shown
    this.partial = null; // {stream, text, cut}: the line being written
    this.lines = 0;
    this.keptHead = '';
    this.keptTail = [];
    this.keptTailChars = 0;
    this.cutChars = 0;
    this.droppedBytes = 0; // left the service's buffer before the page read them
    this.received = 0;
    this.frame = 0;
    this.lastDraw = 0;
    this.linesDrawn = 0;
    this.flooding = false;
    this.element = h('div', { class: 'entry-out' });
    this.headPre = h('pre', { class: 'out-lines' });
    this.downloadLink = h('a', { href: '#', class: 'out-download', onclick: (event) => { event.preventDefault(); this.download(); } }, 'download the full output');
    this.gapText = h('span');
    this.gap = h('div', { class: 'out-gap', hidden: true }, this.gapText, '; ', this.downloadLink);
    this.tailPre = h('pre', { class: 'out-lines' });
    this.element.append(this.headPre, this.gap, this.tailPre);
  }

  /** Adds output of `stream` ('stdout' or 'stderr'); drawn on a later frame. */
  write(stream, text) {
    if (!text) return;
    this.received += text.length;
    this.keep(text);
    let start = 0;
    let counted = false;
    for (;;) {
      if (!counted && this.headFull) {
        counted = true;
        start = this.countHidden(text, start);
      }
      const newline = text.indexOf('\n', start);
      const piece = text.slice(start, newline < 0 ? text.length : newline);
      this.extend(stream, piece);
      if (newline < 0) break;
      this.completeLine();
      start = newline + 1;
    }
    this.schedule();
  }

  /** Whether the first lines are all there: every line from now on goes to the tail. */
  get headFull() {
    return this.head.length >= HEAD_LINES || this.hidden > 0 || this.tail.length > 0;
  }

  /**
   * Counts, without handling them one by one, the lines of `text` from `from` on that the
   * newest TAIL_LINES would push out of the tail anyway (a flood writes thousands per chunk);
   * answers where the lines to handle begin.
   */
  countHidden(text, from) {
    // The newline ending the last line that is not among the newest TAIL_LINES.
    let cut = text.length;
    for (let i = 0; i <= TAIL_LINES; i += 1) {
      cut = cut > from ? text.lastIndexOf('\n', cut - 1) : -1;
      if (cut < from) return from;
    }
    let skipped = 0;
    for (let at = text.indexOf('\n', from); at >= 0 && at <= cut; at = text.indexOf('\n', at + 1)) skipped += 1;
    // The line being written and every line of the tail are among those pushed out.
    this.hidden += this.tail.length + skipped;
    this.lines += skipped;
    this.tail = [];
    this.partial = null;
    return cut + 1;
  }

  /** Output the service could not keep: said where it was. */
  dropped(bytes) {
    this.droppedBytes += bytes;
    if (this.partial) this.completeLine();
    this.pushLine({ stream: 'note', text: `[${fmt.bytes(bytes)} of output cut here: more came than the service keeps (policy.max_output_bytes): it keeps the start and the newest part]` });
    this.keep(`\n[${bytes} bytes of output cut here]\n`);
    this.schedule();
  }

  extend(stream, piece) {
    if (!piece) return;
    // A line is shown in the colour of the stream that began it.
    if (!this.partial || (!this.partial.text && !this.partial.cut)) this.partial = { stream, text: '', cut: 0 };
    const room = MAX_LINE_CHARS - this.partial.text.length;
    if (piece.length <= room) this.partial.text += piece;
    else {
      this.partial.text += piece.slice(0, Math.max(0, room));
      this.partial.cut += piece.length - Math.max(0, room);
    }
  }

  completeLine() {
    const line = this.partial || { stream: 'stdout', text: '', cut: 0 };
    this.partial = null;
    this.pushLine(line);
  }

  pushLine(line) {
    const bare = line.text.endsWith('\r') ? line.text.slice(0, -1) : line.text;
    const text = line.cut ? `${bare}… [${fmt.count(line.cut)} more characters on this line]` : bare;
    const record = { stream: line.stream, text };
    this.lines += 1;
    if (!this.headFull) {
      this.head.push(record);
      this.headDirty = true;
      return;
    }
    this.tail.push(record);
    if (this.tail.length > TAIL_LINES * 1.5) {
      // Trimmed in batches, so each line costs O(1) on average.
      const extra = this.tail.length - TAIL_LINES;
      this.tail.splice(0, extra);
      this.hidden += extra;
    }
  }

  keep(text) {
    if (this.keptHead.length < HEAD_KEEP && this.keptTail.length === 0) {
      const room = HEAD_KEEP - this.keptHead.length;
      this.keptHead += text.slice(0, room);
      text = text.slice(room);
      if (!text) return;
    }
    this.keptTail.push(text);
    this.keptTailChars += text.length;
    while (this.keptTailChars > TAIL_KEEP && this.keptTail.length > 1) {
      const first = this.keptTail.shift();
      this.keptTailChars -= first.length;
      this.cutChars += first.length;
    }
  }

  schedule() {
    if (this.frame) return;
    this.frame = -1;
    const every = this.flooding ? FLOOD_REDRAW_MS : REDRAW_MS;
    const wait = this.lastDraw ? Math.max(0, every - (performance.now() - this.lastDraw)) : 0;
    setTimeout(() => requestAnimationFrame(() => {
      this.frame = 0;
      this.draw({ live: true });
    }), wait);
  }

  /** Draws now (also what is still being written on the last line); `live` while it comes. */
  draw({ live = false } = {}) {
    this.lastDraw = performance.now();
    this.flooding = live && this.lines - this.linesDrawn > FLOOD_LINES;
    this.linesDrawn = this.lines;
    const room = this.flooding ? FLOOD_LINES : TAIL_LINES;
    const tail = this.tail.length > room ? this.tail.slice(this.tail.length - room) : this.tail;
    const hidden = this.hidden + (this.tail.length - tail.length);
    if (this.headDirty) {
      this.headDirty = false;
      fillLines(this.headPre, this.head, this.tail.length === 0 ? this.partial : null);
    } else if (this.tail.length === 0 && this.partial) {
      fillLines(this.headPre, this.head, this.partial);
    }
    this.gap.hidden = hidden === 0;
    if (hidden) this.gapText.textContent = `${fmt.count(hidden)} earlier line${hidden === 1 ? '' : 's'} not shown`;
    fillLines(this.tailPre, tail, this.tail.length ? this.partial : null);
    // Once the flood calms down, the whole tail is drawn again.
    if (this.flooding) this.schedule();
  }

  /** Whether anything was written. */
  get empty() {
    return this.received === 0 && this.droppedBytes === 0;
  }

  /** The text kept for a download, with what was cut said where it was. */
  text() {
    const cut = this.cutChars ? `\n[${this.cutChars} characters cut here: the page keeps the first ${fmt.bytes(HEAD_KEEP)} and the newest ${fmt.bytes(TAIL_KEEP)} of a command's output]\n` : '';
    return this.keptHead + cut + this.keptTail.join('');
  }

  download(name = 'output.txt') {
    saveBlob(new Blob([this.text()], { type: 'text/plain;charset=utf-8' }), name);
  }

  /** A compact copy for session storage: the lines shown, at most `lines` of the tail. */
  snapshot(lines = 200) {
    const tail = this.tail.slice(-lines);
    return { head: this.head, tail, hidden: this.hidden + (this.tail.length - tail.length), partial: this.partial, dropped: this.droppedBytes };
  }

  static restore(snapshot) {
    const view = new OutputView();
    view.head = snapshot.head || [];
    view.tail = snapshot.tail || [];
    view.hidden = snapshot.hidden || 0;
    view.partial = snapshot.partial || null;
    view.droppedBytes = snapshot.dropped || 0;
    view.received = view.head.length + view.tail.length;
    for (const line of [...view.head, ...view.tail]) view.keep(`${line.text}\n`);
    view.headDirty = true;
    view.draw();
    return view;
  }
}

/** Puts lines into a <pre> as a few spans: one per run of lines of the same stream. */
function fillLines(pre, lines, partial) {
  const spans = [];
  let stream = null;
  let texts = [];
  const flush = () => {
    if (texts.length) spans.push(h('span', { class: `out-${stream}`, dataset: { stream } }, texts.join('')));
    texts = [];
  };
  const add = (line, end) => {
    if (line.stream !== stream) {
      flush();
      stream = line.stream;
    }
    texts.push(line.text + end);
  };
  for (const line of lines) add(line, '\n');
  if (partial) add(partial.cut ? { stream: partial.stream, text: `${partial.text}…` } : partial, '');
  flush();
  pre.replaceChildren(...spans);
  pre.hidden = spans.length === 0;
}
