// The session's network, for a runtime with egress: the allow-list in force (the runtime's,
// or the narrower one this session chose), a form to narrow it (never beyond the runtime's),
// and the connections the sandbox made or tried, from the activity log: host, port, allowed
// or refused, bytes (never what was sent).

import { api, sessionPath } from './api.js';
import { h, scrollHint, setText, show } from './dom.js';
import * as fmt from './format.js';
import { errorText } from './sessions.js';
import { Poller } from './poll.js';

/** How many of the latest connections are listed. */
const MAX_CONNECTIONS = 50;
const EGRESS_ACTION = 'egress.';

/** The rules written in the form: one a line, or separated by commas or spaces. */
export function rulesOf(text) {
  return text.split(/[\s,]+/).filter(Boolean);
}

export class NetworkView {
  constructor(id) {
    this.id = id;
    this.runtime = undefined;
    this.active = false;
    this.ended = false;
    /** Whether the form holds what someone typed, which a refresh must not overwrite. */
    this.edited = false;
    this.poller = new Poller(() => this.refresh());
  }

  mount(pane) {
    this.note = h('p', { class: 'prose network-note', hidden: true });
    this.runtimeRules = h('ul', { class: 'rule-list runtime-rules' });
    this.sessionRules = h('ul', { class: 'rule-list session-rules' });
    this.narrowed = h('span', { class: 'card-sub network-narrowed' });
    this.input = h('textarea', { class: 'mono network-input', rows: 4, spellcheck: 'false', 'aria-label': 'New allow-list' });
    this.input.addEventListener('input', () => {
      this.edited = true;
    });
    this.saveButton = h('button', { type: 'submit', class: 'btn btn-primary btn-small network-save' }, 'Narrow');
    this.resetButton = h(
      'button',
      { type: 'button', class: 'btn btn-ghost btn-small network-reset', title: "Allow again everything the runtime's list allows", onclick: () => this.save(this.runtime.egress || []) },
      "Back to the runtime's list",
    );
    const form = h(
      'form',
      { class: 'network-form' },
      h('label', { class: 'field' }, h('span', { class: 'field-label' }, 'Allow only (one rule a line: pypi.org, *.github.com, api.example.com:8443)'), this.input),
      h('div', { class: 'network-actions' }, this.saveButton, this.resetButton),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.save(rulesOf(this.input.value));
    });
    this.error = h('p', { class: 'alert alert-error', role: 'alert', hidden: true });
    this.notice = h('p', { class: 'alert alert-info', role: 'status', hidden: true });
    this.connections = h('tbody');
    this.table = h(
      'table',
      { class: 'table connections-table' },
      h('thead', null, h('tr', null, ['When', 'Host', 'Via', 'Outcome', 'Bytes'].map((label, i) => h('th', { scope: 'col', class: i === 4 ? 'num' : null }, label)))),
      this.connections,
    );
    this.empty = h('div', { class: 'empty empty-small', hidden: true }, h('p', { class: 'empty-title' }, 'No connection yet.'));
    this.updated = h('span', { class: 'card-sub' });
    this.wrap = h('div', { class: 'table-wrap' }, this.table);
    this.form = form;
    this.body = h(
      'div',
      { class: 'network-body', hidden: true },
      h('div', { class: 'network-lists' }, h('div', null, h('h4', null, "The runtime's list"), this.runtimeRules), h('div', null, h('h4', null, "This session's list ", this.narrowed), this.sessionRules)),
      form,
      h('h4', null, 'Recent connections ', this.updated),
      this.wrap,
      this.empty,
    );
    pane.append(
      h(
        'section',
        { class: 'card', 'aria-label': 'Network' },
        h('header', { class: 'card-head' }, h('h3', null, 'Network')),
        h(
          'p',
          { class: 'prose' },
          "The names this sandbox may reach through the service's proxy; anything else is refused, and so are private addresses and the host whatever the list says. A session may narrow its runtime's list, never widen it; a change holds new connections, not those open already.",
        ),
        this.note,
        this.error,
        this.notice,
        this.body,
      ),
    );
    scrollHint(this.wrap);
  }

  hasEgress() {
    return this.runtime?.network_mode === 'egress';
  }

  setRuntime(runtime) {
    const known = this.runtime !== undefined;
    this.runtime = runtime;
    if (runtime && !this.hasEgress()) {
      setText(
        this.note,
        `Runtime "${runtime.name}" has no egress network (network mode "${runtime.network_mode}"): ${runtime.network_mode === 'none' ? 'its sandboxes reach no network at all' : 'its sandboxes have the whole network, with no allow-list'}.`,
      );
    }
    show(this.note, Boolean(runtime) && !this.hasEgress());
    show(this.body, this.hasEgress());
    if (runtime) this.renderRules(this.runtimeRules, runtime.egress || []);
    if (!known) this.setActive(this.active);
  }

  setActive(active) {
    this.active = active;
    this.poller.set(active && this.hasEgress() && !this.ended);
  }

  setEnded(ended) {
    this.ended = ended;
    for (const control of [this.input, this.saveButton, this.resetButton]) control.disabled = ended;
    this.setActive(this.active);
  }

  async refresh() {
    try {
      const [network, log] = await Promise.all([api.get(sessionPath(this.id, '/network')), api.get(sessionPath(this.id, '/activity'))]);
      show(this.error, false);
      this.renderList(network.egress);
      this.renderConnections(log.entries.filter((e) => e.action.startsWith(EGRESS_ACTION)).slice(0, MAX_CONNECTIONS));
    } catch (error) {
      if (this.ended) return;
      setText(this.error, errorText(error));
      show(this.error);
    }
  }

  async save(rules) {
    try {
      const network = await api.put(sessionPath(this.id, '/network'), { egress: rules });
      this.edited = false;
      setText(this.notice, `Allow-list set (${fmt.count(network.egress.length)} ${network.egress.length === 1 ? 'rule' : 'rules'}): new connections are held to it.`);
      show(this.notice);
      show(this.error, false);
      this.renderList(network.egress);
      window.dispatchEvent(new CustomEvent('sandboxd:activity', { detail: { session: this.id } }));
    } catch (error) {
      setText(this.error, errorText(error));
      show(this.error);
    }
  }

  renderList(rules) {
    this.renderRules(this.sessionRules, rules);
    const runtime = this.runtime?.egress || [];
    const same = rules.length === runtime.length && rules.every((rule, i) => rule === runtime[i]);
    setText(this.narrowed, same ? "(the runtime's)" : '(narrowed)');
    if (!this.edited) this.input.value = rules.join('\n');
  }

  renderRules(list, rules) {
    list.replaceChildren(...(rules.length ? rules.map((rule) => h('li', { class: 'mono rule' }, rule)) : [h('li', { class: 'rule-none' }, 'nothing: every connection is refused')]));
  }

  renderConnections(entries) {
    setText(this.updated, `updated ${fmt.when(new Date().toISOString())}`);
    // Rebuilt only when the list changed, so a selection holds still.
    const key = `${entries.length} ${entries[0]?.at}`;
    if (key === this.shown) return;
    this.shown = key;
    this.connections.replaceChildren(
      ...entries.map((e) => {
        const allowed = e.status === 'ok';
        const said = allowed ? 'allowed' : e.status === 'refused' ? 'refused' : 'failed';
        return h(
          'tr',
          { class: allowed ? null : 'row-error', dataset: { target: e.target, outcome: said } },
          h('td', { class: 'nowrap', title: e.at }, fmt.when(e.at)),
          h('td', { class: 'mono target' }, e.target),
          h('td', { class: 'mono' }, e.action.slice(EGRESS_ACTION.length)),
          h('td', null, h('span', { class: `outcome outcome-${allowed ? 'ok' : 'error'}` }, said), e.error ? h('span', { class: 'outcome-error' }, e.error) : null),
          h('td', { class: 'num' }, e.bytes === undefined || e.bytes === null ? '—' : fmt.bytes(e.bytes)),
        );
      }),
    );
    show(this.table, entries.length > 0);
    show(this.empty, entries.length === 0);
  }

  dispose() {
    this.poller.set(false);
  }
}
