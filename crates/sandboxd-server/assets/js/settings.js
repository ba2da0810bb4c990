// The Runtimes & policy tab: the allowlist, the config in force (as TOML) and the policy.

import { api, request, readJsonLines, ApiError } from './api.js';
import { byId, fill, h } from './dom.js';
import { errorText } from './sessions.js';
import * as fmt from './format.js';
import { store } from './store.js';

const POLICY = [
  ['default_timeout_secs', 'Command timeout', 'used when a command names none', (v) => fmt.seconds(v)],
  ['max_timeout_secs', 'Longest command timeout', 'a request may ask for up to this', (v) => fmt.seconds(v)],
  ['max_output_bytes', 'Output kept per command', 'per stream (stdout, stderr); beyond is cut and marked truncated', (v) => fmt.bytes(v)],
  ['max_upload_bytes', 'Largest upload', 'one file written into a sandbox', (v) => fmt.bytes(v)],
  ['idle_timeout_secs', 'Idle timeout', 'a session nobody used for this long is closed', (v) => fmt.seconds(v)],
  ['max_lifetime_secs', 'Longest lifetime', 'a session is closed this long after it opened, used or not', (v) => fmt.seconds(v)],
  ['max_sessions', 'Open sessions at most', 'what bounds the host: this times the largest memory ceiling', (v) => fmt.count(v)],
  ['auth_failures_per_minute', 'Failed sign-ins per minute', 'a client address failing more often must wait', (v) => fmt.count(v)],
  ['max_connections', 'Connections at most', 'at the limit a new one closes the longest-idle one', (v) => fmt.count(v)],
  ['reserved_connections', 'Kept for the service token', 'requests in progress no tenant can take', (v) => fmt.count(v)],
  ['max_requests_per_caller', 'Requests in progress per caller', 'per tenant, or per address without a token; streams included', (v) => fmt.count(v)],
  ['max_watches_per_session', 'Directory watches per session', 'each holds one of its agent\'s connections', (v) => fmt.count(v)],
  ['max_watches_per_tenant', 'Directory watches per tenant', 'all its sessions together', (v) => fmt.count(v)],
  ['max_port_connections_per_tenant', 'Port connections per tenant', 'all its sessions together', (v) => fmt.count(v)],
  ['max_contexts_per_session', 'Code contexts per session', 'each a kernel in the sandbox', (v) => fmt.count(v)],
  ['max_contexts_per_tenant', 'Code contexts per tenant', 'all its sessions together', (v) => fmt.count(v)],
  ['max_watches', 'Directory watches in all', 'the service\'s ceiling, all tenants together', (v) => fmt.count(v)],
  ['max_shares_per_session', 'Share links per session', 'each reaches one port of the session', (v) => fmt.count(v)],
  ['max_shares_per_tenant', 'Share links per tenant', 'all its sessions together', (v) => fmt.count(v)],
  ['max_shares', 'Share links in all', 'the service\'s ceiling, all tenants together', (v) => fmt.count(v)],
  ['max_dns_lookups_per_sandbox', 'DNS lookups in flight per sandbox', 'egress sandboxes; past it SERVFAIL at once', (v) => fmt.count(v)],
  ['max_dns_lookups', 'DNS lookups in flight in all', 'the service\'s ceiling, all egress sandboxes together', (v) => fmt.count(v)],
];

export class SettingsView {
  constructor() {
    this.buildErrors = new Map(); // runtime name -> why its build request failed
  }

  mount() {
    this.ui = {
      runtimes: byId('runtimes-body'),
      config: byId('config-toml'),
      policy: byId('policy-list'),
    };
    store.on('runtimes', (list) => this.renderRuntimes(list));
    store.on('config', (config) => this.renderConfig(config));
    store.on('policy', (policy) => this.renderPolicy(policy));
  }

  /** The config can only change with a restart; refetched when the tab is opened anyway. */
  async refresh() {
    try {
      const [runtimes, policy, config] = await Promise.all([
        api.get('/v1/runtimes'),
        api.get('/v1/policy'),
        api.get('/v1/config').catch((error) => {
          if (error instanceof ApiError && error.status === 403) return null;
          throw error;
        }),
      ]);
      store.set('runtimes', runtimes);
      store.set('policy', policy);
      store.set('config', config);
    } catch {
      // the connection state says why; the last figures stay
    }
  }

  renderRuntimes(list) {
    fill(
      this.ui.runtimes,
      list.runtimes.map((r) =>
        h(
          'tr',
          { dataset: { runtime: r.name } },
          h(
            'th',
            { scope: 'row' },
            h('span', { class: 'pill' }, r.name),
            r.name === list.default_runtime ? h('span', { class: 'tag' }, 'default') : null,
            r.isolation === 'gvisor'
              ? h('span', { class: 'tag', title: "isolation: gVisor, a kernel of the sandbox's own" }, 'gvisor')
              : null,
            r.pool_size ? h('span', { class: 'tag', title: 'sandboxes kept started and ready' }, `${r.pool_size} warm`) : null,
            r.description ? h('div', { class: 'runtime-description' }, r.description) : null,
          ),
          h(
            'td',
            { class: 'wrap' },
            r.image
              ? h('span', { class: 'mono' }, r.image)
              : h('span', null, h('span', { class: 'muted' }, 'recipe '), h('span', { class: 'mono' }, r.recipe)),
            imageState(r),
            this.buildControl(r),
          ),
          h('td', { class: 'num' }, fmt.bytes(r.mem_limit_bytes)),
          h('td', { class: 'num' }, String(r.cpus)),
          h('td', { class: 'num' }, fmt.count(r.pids_limit)),
          h('td', null, h('span', { class: `net net-${r.network_mode}` }, r.network_mode === 'none' ? 'none' : r.network_mode)),
          h('td', { class: 'num' }, fmt.bytes(r.tmpfs_size_bytes)),
          h('td', { class: 'mono' }, r.interpreter && r.interpreter.length ? r.interpreter.join(' ') : h('span', { class: 'muted' }, '—')),
        ),
      ),
    );
  }

  /** A Build (or Pull) button for an image not on the engine, and what the last request said. */
  buildControl(runtime) {
    const error = this.buildErrors.get(runtime.name);
    const button =
      runtime.state === 'not_built' || runtime.state === 'failed'
        ? h(
            'button',
            {
              type: 'button',
              class: 'btn btn-small runtime-build',
              title: 'Make the image available now, rather than when the first session asks for it',
              onclick: () => this.build(runtime.name),
            },
            runtime.recipe ? 'Build image' : 'Pull image',
          )
        : null;
    if (!button && !error) return null;
    return h('div', { class: 'runtime-build-row' }, button, error ? h('p', { class: 'alert alert-error runtime-build-error', role: 'alert' }, error) : null);
  }

  /**
   * Builds (or pulls) a runtime's image and shows each change the service streams in the
   * runtime's row (step n of m, the last line) until it is ready or failed.
   */
  async build(name) {
    this.buildErrors.delete(name);
    this.setStatus(name, { state: 'building', progress: { line: 'starting' } });
    try {
      const response = await request('POST', `/v1/runtimes/${encodeURIComponent(name)}/build`, { headers: { Accept: 'application/x-ndjson' } });
      await readJsonLines(response, (event) => {
        this.setStatus(name, event);
        if (event.state === 'failed') this.buildErrors.set(name, `The build failed: ${event.reason || 'no reason given'}`);
      });
    } catch (error) {
      this.buildErrors.set(name, errorText(error));
    }
    // Where it stands now, from the list (a failed request left the row saying "building").
    await this.refresh();
    this.renderRuntimes(store.runtimes);
  }

  /** Puts a runtime's image status (state, progress, reason) into the shared list. */
  setStatus(name, status) {
    const list = store.runtimes;
    const runtime = list && list.runtimes.find((r) => r.name === name);
    if (!runtime) return;
    delete runtime.progress;
    delete runtime.reason;
    for (const key of ['state', 'progress', 'reason']) if (key in status) runtime[key] = status[key];
    store.set('runtimes', list);
  }

  renderPolicy(policy) {
    fill(
      this.ui.policy,
      POLICY.filter(([key]) => key in policy).map(([key, label, help, format]) =>
        h(
          'div',
          { class: 'policy-row' },
          h('dt', null, label, h('span', { class: 'policy-help' }, help)),
          h('dd', null, format(policy[key]), h('code', { class: 'policy-key' }, `policy.${key}`)),
        ),
      ),
    );
  }

  renderConfig(config) {
    if (!config) {
      fill(this.ui.config, h('span', { class: 't-comment' }, '# The config in force is shown to the service token only; this token is a tenant\'s.'));
      return;
    }
    fill(this.ui.config, toml(config));
  }
}

// The config in force written back as TOML, as spans for a little colour. Every value is
// text; nothing here is parsed as markup.
function toml(config) {
  const out = [];
  const comment = (text) => out.push(h('span', { class: 't-comment' }, `# ${text}`), '\n');
  const table = (name) => out.push('\n', h('span', { class: 't-table' }, `[${name}]`), '\n');
  const pair = (key, value, note) => {
    out.push(h('span', { class: 't-key' }, key), ' = ', literal(value));
    if (note) out.push('  ', h('span', { class: 't-comment' }, `# ${note}`));
    out.push('\n');
  };
  pair('token', '<redacted>', 'never shown: it is a root credential');
  pair('default_runtime', config.default_runtime);
  out.push('\n');
  comment('Defaults for any runtime that names none of its own (a default, not a maximum).');
  limits(config.defaults, pair);
  out.push('\n');
  pair('max_sessions', config.max_sessions, 'what bounds the host: this times the largest ceiling');
  for (const [name, runtime] of Object.entries(config.runtimes || {})) {
    table(`runtimes.${tomlKey(name)}`);
    if (runtime.description) pair('description', runtime.description);
    if (runtime.image) pair('image', runtime.image);
    if (runtime.recipe) pair('runtime', runtime.recipe, 'a recipe, built on first use');
    limits(runtime, pair);
    if (runtime.interpreter && runtime.interpreter.length) pair('interpreter', runtime.interpreter);
    if (runtime.pool_size) pair('pool_size', runtime.pool_size, 'kept started and ready');
  }
  for (const tenant of config.tenants || []) {
    table(`tenants.${tomlKey(tenant.name)}`);
    pair('token_sha256', '<not shown>');
    pair('runtimes', tenant.runtimes);
    pair('max_sessions', tenant.max_sessions);
  }
  if (config.policy) {
    table('policy');
    out.push(h('span', { class: 't-comment' }, '# limits nothing can raise'), '\n');
    const p = config.policy;
    for (const key of ['default_timeout_secs', 'max_timeout_secs']) if (key in p) pair(key, p[key]);
    if ('max_output_bytes' in p) pair('max_output_bytes', fmt.configSize(p.max_output_bytes), 'per stream, per command');
    if ('max_upload_bytes' in p) pair('max_upload_bytes', fmt.configSize(p.max_upload_bytes));
    for (const key of ['idle_timeout_secs', 'max_lifetime_secs']) if (key in p) pair(key, p[key]);
    const shown = ['default_timeout_secs', 'max_timeout_secs', 'max_output_bytes', 'max_upload_bytes', 'idle_timeout_secs', 'max_lifetime_secs', 'max_sessions'];
    for (const [key, value] of Object.entries(p)) {
      if (!shown.includes(key) && (typeof value === 'number' || typeof value === 'string')) pair(key, value);
    }
  }
  return out;
}

/** Where a runtime's image stands, from GET /v1/runtimes: ready, not built, building, failed. */
export function imageState(runtime) {
  switch (runtime.state) {
    case undefined:
      return null;
    case 'ready':
      return h('span', { class: 'state state-ready', title: 'the image is on the engine: a session starts at once' }, 'ready');
    case 'not_built':
      return h('span', { class: 'state state-pending', title: 'the first session (or a build request) pulls or builds it' }, runtime.recipe ? 'built on first use' : 'not on the engine yet');
    case 'building': {
      const p = runtime.progress || {};
      const step = p.step && p.steps ? ` step ${p.step} of ${p.steps}` : '';
      return h('span', { class: 'build' }, h('span', { class: 'state state-building' }, `building${step}`), p.line ? h('span', { class: 'build-line mono' }, p.line) : null);
    }
    case 'failed':
      return h('span', { class: 'state state-failed', title: runtime.reason || '' }, 'last build failed');
    default:
      return h('span', { class: 'state' }, String(runtime.state));
  }
}

function limits(l, pair) {
  if (!l) return;
  pair('mem_limit', fmt.configSize(l.mem_limit_bytes));
  pair('cpus', Number.isInteger(l.cpus) ? `${l.cpus}.0` : l.cpus);
  pair('pids_limit', l.pids_limit);
  pair('network_mode', l.network_mode);
  pair('tmpfs_size', fmt.configSize(l.tmpfs_size_bytes), 'each of /tmp and the working directory; counts against memory');
}

function literal(value) {
  if (Array.isArray(value)) {
    return [h('span', null, '['), value.map((v, i) => [i ? ', ' : '', literal(v)]), h('span', null, ']')];
  }
  if (typeof value === 'number') return h('span', { class: 't-number' }, String(value));
  if (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value)) return h('span', { class: 't-number' }, value);
  return h('span', { class: 't-string' }, JSON.stringify(String(value)));
}

function tomlKey(name) {
  return /^[A-Za-z0-9_-]+$/.test(name) ? name : JSON.stringify(name);
}
