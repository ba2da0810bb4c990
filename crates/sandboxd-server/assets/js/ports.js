// The session's ports: the TCP servers listening in the sandbox, each with a button that opens
// it in a new tab through a share link (no token in the tab; the link expires in an hour).

import { api, sessionPath } from './api.js';
import { h, scrollHint, setText, show } from './dom.js';
import * as fmt from './format.js';
import { errorText } from './sessions.js';
import { Poller } from './poll.js';

/** How long a preview link works, in seconds. */
const PREVIEW_TTL_SECS = 3600;

export class PortsView {
  constructor(id) {
    this.id = id;
    this.active = false;
    this.ended = false;
    this.poller = new Poller(() => this.refresh());
  }

  mount(pane) {
    this.body = h('tbody');
    this.table = h(
      'table',
      { class: 'table ports-table' },
      h('thead', null, h('tr', null, ['Port', 'Address', 'Process', ''].map((label) => h('th', { scope: 'col' }, label)))),
      this.body,
    );
    this.empty = h(
      'div',
      { class: 'empty empty-small', hidden: true },
      h('p', { class: 'empty-title' }, 'Nothing is listening.'),
      h('p', { class: 'prose' }, 'Start a server in the session (e.g. python3 -m http.server 8000) and it shows here.'),
    );
    this.error = h('p', { class: 'alert alert-error', role: 'alert', hidden: true });
    this.notice = h('p', { class: 'alert alert-info', role: 'status', hidden: true });
    this.updated = h('span', { class: 'card-sub' });
    this.wrap = h('div', { class: 'table-wrap' }, this.table);
    pane.append(
      h(
        'section',
        { class: 'card', 'aria-label': 'Ports' },
        h('header', { class: 'card-head' }, h('h3', null, 'Ports'), this.updated),
        h(
          'p',
          { class: 'prose' },
          'The TCP ports listening in this sandbox. Open one to see it in a new tab, through a link that needs no token, reaches only that port and works for an hour (or until the session closes). The sandbox needs no network for it.',
        ),
        this.error,
        this.notice,
        this.wrap,
        this.empty,
      ),
    );
    scrollHint(this.wrap);
  }

  setActive(active) {
    this.active = active;
    this.poller.set(active && !this.ended);
  }

  setEnded(ended) {
    this.ended = ended;
    if (ended) {
      this.setActive(false);
      this.render([]);
    }
  }

  async refresh() {
    try {
      const { ports } = await api.get(sessionPath(this.id, '/ports'));
      show(this.error, false);
      this.render(ports);
    } catch (error) {
      setText(this.error, errorText(error));
      show(this.error);
    }
  }

  render(ports) {
    setText(this.updated, `updated ${fmt.when(new Date().toISOString())}`);
    // Rebuilt only when the list changed, so a focused button holds still.
    const key = ports.map((p) => `${p.port}/${p.address}/${p.pid}`).join(' ');
    if (key === this.shown) return;
    this.shown = key;
    this.body.replaceChildren(
      ...ports.map((port) =>
        h(
          'tr',
          { dataset: { port: String(port.port) } },
          h('td', { class: 'mono' }, String(port.port)),
          h('td', { class: 'mono' }, port.address),
          h('td', null, port.program ? `${port.program} (pid ${port.pid})` : port.pid ? `pid ${port.pid}` : '—'),
          h(
            'td',
            { class: 'num' },
            h('button', { type: 'button', class: 'btn btn-small open-preview', title: 'Open it in a new tab through a share link', onclick: () => this.open(port.port) }, 'Open preview'),
          ),
        ),
      ),
    );
    show(this.table, ports.length > 0);
    show(this.empty, ports.length === 0 && !this.ended);
  }

  /** Opens `port` in a new tab: the tab is opened on the click, then sent to a new link. */
  async open(port) {
    const tab = window.open('about:blank', '_blank');
    if (tab) tab.opener = null;
    try {
      const share = await api.post(sessionPath(this.id, `/ports/${port}/share`), { ttl_secs: PREVIEW_TTL_SECS });
      const link = new URL(share.url || share.path, location.origin);
      if (link.protocol !== 'http:' && link.protocol !== 'https:') throw new Error('the link is not a web address');
      if (tab) tab.location.href = link.href;
      setText(this.notice, `Port ${port} opened in a new tab; its link works until ${fmt.when(share.expires_at)}: ${link.href}`);
      show(this.notice);
      show(this.error, false);
    } catch (error) {
      tab?.close();
      setText(this.error, errorText(error));
      show(this.error);
    }
  }

  dispose() {
    this.setActive(false);
  }
}
