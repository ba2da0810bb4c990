// The dashboard's entry point: sign-in, tabs, and the refresh loop of the live figures.

import { api, auth, connection, request, readEventStream, ApiError } from './api.js';
import { byId, scrollHint, show, setText } from './dom.js';
import { store } from './store.js';
import { SessionsView } from './sessions.js';
import { SessionView } from './session.js';
import { SettingsView } from './settings.js';
import { SnapshotsView } from './snapshots.js';
import { VolumesView } from './volumes.js';

const REFRESH_MS = 2000;

const ui = {
  signin: byId('signin'),
  app: byId('app'),
  form: byId('signin-form'),
  token: byId('signin-token'),
  remember: byId('signin-remember'),
  submit: byId('signin-submit'),
  signinStatus: byId('signin-status'),
  signinError: byId('signin-error'),
  conn: byId('conn'),
  connText: byId('conn-text'),
  signOut: byId('sign-out'),
  signOutEverywhere: byId('sign-out-everywhere'),
  offline: byId('offline'),
};

const sessions = new SessionsView({ open: (id) => navigate(`#session/${encodeURIComponent(id)}`) });
const session = new SessionView({ back: () => navigate('#sessions') });
const settings = new SettingsView();
const snapshots = new SnapshotsView({ open: (id) => navigate(`#session/${encodeURIComponent(id)}`) });

let signedIn = false;
let refreshTimer = null;
let refreshing = false;

// --- connection state ----------------------------------------------------------------------

const CONNECTION_TEXT = {
  connecting: 'connecting',
  connected: 'connected',
  unreachable: 'unreachable',
  unauthorized: 'token refused',
  signedout: 'signed out',
};

connection.subscribe((state) => {
  ui.conn.dataset.state = state;
  setText(ui.connText, CONNECTION_TEXT[state] || state);
  if (state === 'unreachable' && signedIn) {
    setText(ui.offline, `The service at ${location.host} does not answer; retrying every few seconds. What is shown may be out of date.`);
    show(ui.offline);
  } else {
    show(ui.offline, false);
  }
  if (state === 'unauthorized' && signedIn) {
    signOut('The service no longer accepts this token (it may have been changed). Sign in again.');
  }
});

// --- sign-in -------------------------------------------------------------------------------

function showSignIn(error, status = '') {
  signedIn = false;
  stopRefresh();
  session.select(null);
  show(ui.app, false);
  show(ui.signOut, false);
  show(ui.signOutEverywhere, false);
  show(ui.signin);
  ui.submit.disabled = false;
  setText(ui.signinStatus, status);
  setText(ui.signinError, error || '');
  show(ui.signinError, Boolean(error));
  if (!error) connection.set('signedout');
  ui.token.focus();
  probe();
}

/** Before sign-in, says whether the service answers at all (/healthz needs no token). */
async function probe() {
  try {
    const response = await fetch('/healthz', { cache: 'no-store', credentials: 'omit' });
    if (!response.ok) throw new Error(String(response.status));
  } catch {
    if (!signedIn) connection.set('unreachable', 'the service does not answer');
  }
}

function signOut(reason) {
  auth.clear();
  showSignIn(reason);
}

async function signIn() {
  ui.submit.disabled = true;
  show(ui.signinError, false);
  setText(ui.signinStatus, 'Connecting…');
  connection.set('connecting');
  try {
    await loadStatic();
  } catch (error) {
    auth.clear();
    showSignIn(signInMessage(error));
    return;
  }
  signedIn = true;
  ui.token.value = '';
  show(ui.signin, false);
  show(ui.app);
  show(ui.signOut);
  show(ui.signOutEverywhere);
  route();
  startRefresh();
}

function signInMessage(error) {
  if (error instanceof ApiError) {
    if (error.status === 401) {
      return 'The service refused this token. Check it against the token file the service named when it started.';
    }
    if (error.status === 0) {
      return `The service at ${location.host} does not answer. Is sandboxd running? (Start it with: sandboxd serve)`;
    }
    return `The service answered ${error.status}: ${error.message}`;
  }
  return `Could not sign in: ${error.message || error}`;
}

ui.form.addEventListener('submit', (event) => {
  event.preventDefault();
  const value = ui.token.value.trim();
  if (!value) {
    setText(ui.signinError, 'Paste the service token first.');
    show(ui.signinError);
    return;
  }
  auth.set(value, ui.remember.checked);
  signIn();
});

ui.signOut.addEventListener('click', () => signOut());
ui.signOutEverywhere.addEventListener('click', () => {
  auth.clearEverywhere();
  showSignIn(null, 'Signed out in every tab of this browser.');
});
auth.onSignedOutElsewhere(() => showSignIn(null, 'Signed out in every tab of this browser (from another tab).'));

// --- data ----------------------------------------------------------------------------------

/** What changes only with a restart: the allowlist, the policy and the config. */
async function loadStatic() {
  const [runtimes, policy, config] = await Promise.all([
    api.get('/v1/runtimes'),
    api.get('/v1/policy'),
    configInForce(),
  ]);
  store.set('runtimes', runtimes);
  store.set('policy', policy);
  store.set('config', config);
}

/** The config in force, or null when this token may not see it (a tenant's token). */
export async function configInForce() {
  try {
    return await api.get('/v1/config');
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) return null;
    throw error;
  }
}

async function refresh() {
  if (refreshing || !signedIn) return;
  refreshing = true;
  try {
    const [stats, list] = await Promise.all([api.get('/v1/stats'), api.get('/v1/sessions')]);
    store.set('stats', stats);
    store.sessionsAt = new Date();
    store.set('sessions', list.sessions);
  } catch (error) {
    if (!(error instanceof ApiError)) console.error(error);
  } finally {
    refreshing = false;
  }
}

// --- session changes, as they happen ----------------------------------------------------------

let events = null;

/**
 * Follows GET /v1/events, so a session that ends (closed elsewhere, expired, its sandbox
 * removed outside) shows as ended at once rather than at the next refresh. Reconnects with a
 * growing pause while signed in; the 2 s refresh stays as the fallback.
 */
function followEvents() {
  const abort = new AbortController();
  events = abort;
  let pause = 1000;
  (async () => {
    while (!abort.signal.aborted) {
      try {
        const response = await request('GET', '/v1/events', { headers: { Accept: 'text/event-stream' }, signal: abort.signal });
        pause = 1000;
        await readEventStream(response, ({ event, data }) => {
          if (event === 'session') {
            const change = JSON.parse(data);
            if (change.state === 'ended') {
              store.endReasons.set(change.id, change.end_reason || '');
              sessions.ended(change.id, change.end_reason);
              session.endedOutside(change.id, change.end_reason);
            }
          }
          refresh();
        });
      } catch {
        // the connection state says why; try again below
      }
      if (abort.signal.aborted) break;
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, 10_000);
    }
  })();
}

function startRefresh() {
  stopRefresh();
  followEvents();
  refresh();
  refreshTimer = setInterval(() => {
    if (!document.hidden) refresh();
  }, REFRESH_MS);
}

function stopRefresh() {
  clearInterval(refreshTimer);
  refreshTimer = null;
  events?.abort();
  events = null;
}

document.addEventListener('visibilitychange', () => {
  if (!document.hidden && signedIn) refresh();
});

// Views dispatch this after they changed something, so the figures follow at once.
window.addEventListener('sandboxd:changed', () => refresh());
// A session was opened: its runtime's image may have been built meanwhile.
window.addEventListener('sandboxd:runtimes', () => settings.refresh());

// --- tabs ----------------------------------------------------------------------------------

const tabs = {
  sessions: { tab: byId('tab-sessions'), panel: byId('panel-sessions') },
  session: { tab: byId('tab-session'), panel: byId('panel-session') },
  runtimes: { tab: byId('tab-runtimes'), panel: byId('panel-runtimes') },
};

function navigate(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

function route() {
  if (!signedIn) return;
  const parts = location.hash.replace(/^#/, '').split('/');
  let name = parts[0] || 'sessions';
  if (!(name in tabs)) name = 'sessions';
  if (name === 'session') {
    const id = parts[1] ? decodeURIComponent(parts[1]) : session.id;
    session.select(id || null, parts[2]);
  }
  for (const [key, { tab, panel }] of Object.entries(tabs)) {
    const active = key === name;
    tab.setAttribute('aria-selected', String(active));
    tab.classList.toggle('active', active);
    show(panel, active);
  }
  tabs.session.tab.href = session.id ? `#session/${encodeURIComponent(session.id)}` : '#session';
  session.setVisible(name === 'session');
  sessions.setVisible(name === 'sessions');
  if (name === 'runtimes') settings.refresh();
}

window.addEventListener('hashchange', route);

// --- start ---------------------------------------------------------------------------------

sessions.mount();
snapshots.mount();
new VolumesView().mount();
settings.mount();
session.mount();
for (const wrap of document.querySelectorAll('.table-wrap')) scrollHint(wrap);

// Kept by this tab, or handed over by another open tab of this browser; else the form.
if (auth.restore()) signIn();
else auth.ask().then((handed) => (handed ? signIn() : showSignIn()));
