// What the page knows about the service, shared by the views: the allowlist, the policy, the
// config in force, the live figures and the open sessions. Views subscribe to changes.

const listeners = new Map();

export const store = {
  runtimes: null, // {default_runtime, runtimes: [...]}
  policy: null,
  config: null,
  stats: null,
  sessions: null, // [...], running ones
  sessionsAt: null, // Date of the last successful listing
  endReasons: new Map(), // session id -> why it ended, as the events said

  set(key, value) {
    this[key] = value;
    for (const listener of listeners.get(key) || []) listener(value);
  },
  on(key, listener) {
    if (!listeners.has(key)) listeners.set(key, new Set());
    listeners.get(key).add(listener);
    return () => listeners.get(key).delete(listener);
  },
  runtime(name) {
    return this.runtimes ? this.runtimes.runtimes.find((r) => r.name === name) : undefined;
  },
  /** Whether the runtime's sessions are desktops (its image is the catalogue's desktop recipe). */
  isDesktop(name) {
    const runtime = this.runtime(name);
    return Boolean(runtime && runtime.recipe === 'desktop');
  },
};
