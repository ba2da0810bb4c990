// The API client: the token, the headers every call carries, errors in one shape, and the
// connection state the page shows ("connecting", "connected", "unreachable", "token refused").
//
// The token lives in memory, and in sessionStorage when the operator asks for it (that tab
// only, gone when it closes). It is never put in a cookie, a URL, localStorage or a
// WebSocket: it travels in the Authorization header only. A WebSocket (where browsers cannot
// set headers) presents a single-use ticket for that one connection instead, fetched with the
// header just before.
//
// A new tab of the same browser asks the open ones over a BroadcastChannel (same origin only;
// a share link's page has an opaque origin of its own and cannot join it) and a tab whose
// operator asked to keep the token answers with it, in memory: so it lasts as long as one
// such tab is open, and nothing is written where it outlives the browser. "Sign out
// everywhere" tells every tab to forget it.

const STORAGE_KEY = 'sandboxd.token';
const CLIENT_HEADER = 'X-Sandboxd-Client';
/** How long a new tab waits for an open one to hand it the token. */
const ASK_MS = 400;

let token = null;
let kept = false; // the operator asked to keep it: this tab may hand it to a new one
const listeners = new Set();
const signedOutListeners = new Set();
const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel('sandboxd.auth') : null;
const pendingAsks = new Map(); // ask id -> resolve(token)

channel?.addEventListener('message', ({ data }) => {
  if (!data || typeof data !== 'object') return;
  if (data.type === 'ask' && token !== null && kept) {
    channel.postMessage({ type: 'token', ask: data.ask, token });
  } else if (data.type === 'token' && pendingAsks.has(data.ask) && typeof data.token === 'string' && data.token) {
    pendingAsks.get(data.ask)(data.token);
  } else if (data.type === 'signout') {
    const had = token !== null;
    forget();
    if (had) for (const listener of signedOutListeners) listener();
  }
});

function forget() {
  token = null;
  kept = false;
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // nothing kept
  }
}

export const connection = {
  state: 'connecting',
  detail: '',
  set(state, detail = '') {
    if (this.state === state && this.detail === detail) return;
    this.state = state;
    this.detail = detail;
    for (const listener of listeners) listener(state, detail);
  },
  subscribe(listener) {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};

export const auth = {
  /** The token kept for this tab by an earlier sign-in, if any. */
  restore() {
    try {
      token = sessionStorage.getItem(STORAGE_KEY) || null;
    } catch {
      token = null;
    }
    kept = token !== null;
    return token !== null;
  },
  /** Asks the other open tabs for the token they keep: resolves true when one handed it over. */
  ask() {
    if (!channel) return Promise.resolve(false);
    // getRandomValues, not randomUUID: the page may be served over plain HTTP on a private network.
    const ask = Array.from(crypto.getRandomValues(new Uint32Array(4)), (n) => n.toString(16)).join('');
    return new Promise((resolve) => {
      const done = (value) => {
        pendingAsks.delete(ask);
        clearTimeout(timer);
        if (value !== null && token === null) this.set(value, true);
        resolve(value !== null);
      };
      const timer = setTimeout(() => done(null), ASK_MS);
      pendingAsks.set(ask, done);
      channel.postMessage({ type: 'ask', ask });
    });
  },
  set(value, keep) {
    token = value;
    kept = Boolean(keep);
    try {
      if (keep) sessionStorage.setItem(STORAGE_KEY, value);
      else sessionStorage.removeItem(STORAGE_KEY);
    } catch {
      // Storage refused (private mode, policy): memory only.
    }
  },
  /** Forgets the token in this tab only. */
  clear() {
    forget();
  },
  /** Forgets the token in this tab and tells every other open tab to forget it too. */
  clearEverywhere() {
    forget();
    channel?.postMessage({ type: 'signout' });
  },
  /** Calls `listener` when another tab signed out everywhere and this one was signed in. */
  onSignedOutElsewhere(listener) {
    signedOutListeners.add(listener);
  },
  has() {
    return token !== null;
  },
};

export class ApiError extends Error {
  /** `remedy` is the service's stable key for what to do (e.g. "open_session"), if any. */
  constructor(status, code, message, remedy = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.remedy = remedy;
  }
}

function headers(extra) {
  const result = new Headers(extra || {});
  if (token !== null) result.set('Authorization', `Bearer ${token}`);
  result.set(CLIENT_HEADER, 'dashboard');
  return result;
}

/** fetch() with the token, for a path of this service; throws ApiError on failure. */
export async function request(method, path, { json, body, headers: extra, signal } = {}) {
  const init = {
    method,
    headers: headers(extra),
    signal,
    cache: 'no-store',
    credentials: 'omit',
    redirect: 'error',
    referrerPolicy: 'no-referrer',
  };
  if (json !== undefined) {
    init.headers.set('Content-Type', 'application/json');
    init.body = JSON.stringify(json);
  } else if (body !== undefined) {
    init.body = body;
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    if (signal && signal.aborted) throw error;
    connection.set('unreachable', 'the service does not answer');
    throw new ApiError(0, 'unreachable', 'The service does not answer. Is sandboxd still running?');
  }
  if (!response.ok) throw await errorOf(response);
  connection.set('connected');
  return response;
}

/** The error an answer carries, in the API's {"error": {"code", "message"}} shape. */
export async function errorOf(response) {
  let code = `http_${response.status}`;
  let message = `${response.status} ${response.statusText}`.trim();
  let remedy = null;
  try {
    const body = await response.json();
    if (body && body.error) {
      code = String(body.error.code || code);
      message = String(body.error.message || message);
      if (typeof body.error.remedy === 'string') remedy = body.error.remedy;
    }
  } catch {
    // not JSON: keep the status line
  }
  if (response.status === 401) connection.set('unauthorized', message);
  else connection.set('connected');
  return new ApiError(response.status, code, message, remedy);
}

export async function getJSON(path, options) {
  const response = await request('GET', path, options);
  return response.json();
}

export async function sendJSON(method, path, json, options = {}) {
  const response = await request(method, path, { ...options, json });
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

/**
 * Uploads a body with progress (fetch cannot report upload progress): resolves with the
 * parsed answer, rejects with ApiError.
 */
export function upload(method, path, body, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, path);
    headers().forEach((value, name) => xhr.setRequestHeader(name, value));
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    xhr.responseType = 'text';
    xhr.upload.addEventListener('progress', (event) => {
      if (onProgress && event.lengthComputable) onProgress(event.loaded, event.total);
    });
    xhr.addEventListener('load', async () => {
      const response = new Response(xhr.responseText || null, {
        status: xhr.status,
        statusText: xhr.statusText,
        headers: { 'Content-Type': xhr.getResponseHeader('Content-Type') || 'text/plain' },
      });
      if (xhr.status >= 200 && xhr.status < 300) {
        connection.set('connected');
        resolve(xhr.responseText ? JSON.parse(xhr.responseText) : null);
      } else {
        reject(await errorOf(response));
      }
    });
    xhr.addEventListener('error', () => {
      connection.set('unreachable', 'the service does not answer');
      reject(new ApiError(0, 'unreachable', 'The upload could not reach the service.'));
    });
    xhr.addEventListener('abort', () => reject(new ApiError(0, 'aborted', 'The upload was cancelled.')));
    xhr.send(body);
  });
}

/** The longest event-stream line the page takes; the service's own lines are far shorter. */
const MAX_EVENT_LINE = 16 << 20;
/**
 * Reading a fast stream works at most WORK_MS at a time, then rests REST_MS: the page stays
 * free for input and drawing, and a flood takes at most a quarter of its thread, which
 * matters most when the machine is busy (a flood cannot be read anyway; see below).
 */
const WORK_MS = 4;
const REST_MS = 12;

/**
 * Reads a text/event-stream answer (EventSource cannot send a token): calls onEvent({event,
 * data, id}) for each event, resolves when the stream ends. However fast the stream comes, it
 * yields to the page's other work every few milliseconds, so clicks stay answered; reading
 * slower than the service writes is fine (the service drops what its buffer cannot hold, and
 * says so).
 */
export async function readEventStream(response, onEvent) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let event = { event: 'message', data: [], id: null };
  let worked = performance.now();
  const dispatch = () => {
    if (event.data.length) onEvent({ event: event.event, data: event.data.join('\n'), id: event.id });
    event = { event: 'message', data: [], id: null };
  };
  const line = (text) => {
    if (text === '') {
      dispatch();
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let data = colon < 0 ? '' : text.slice(colon + 1);
    if (data.startsWith(' ')) data = data.slice(1);
    if (field === 'event') event.event = data;
    else if (field === 'data') event.data.push(data);
    else if (field === 'id') event.id = data;
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let start = 0;
      for (;;) {
        const newline = buffer.indexOf('\n', start);
        if (newline < 0) break;
        const end = newline > start && buffer.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
        line(buffer.slice(start, end));
        start = newline + 1;
        // Within a chunk too: one read can bring megabytes of events.
        if (performance.now() - worked > WORK_MS) {
          await new Promise((resolve) => setTimeout(resolve, REST_MS));
          worked = performance.now();
        }
      }
      buffer = buffer.slice(start);
      if (buffer.length > MAX_EVENT_LINE) throw new ApiError(502, 'stream_failed', 'the event stream sent a line too long to read');
    }
  } finally {
    reader.releaseLock();
  }
  if (buffer) line(buffer);
  dispatch();
}

/** The longest line of a newline-delimited JSON answer the page takes (a build's are short). */
const MAX_JSON_LINE = 1 << 20;

/** Reads a newline-delimited JSON answer: calls onValue(value) for each line, resolves at its end. */
export async function readJsonLines(response, onValue) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const line = (text) => {
    if (text.trim()) onValue(JSON.parse(text));
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let newline;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        line(buffer.slice(0, newline));
        buffer = buffer.slice(newline + 1);
      }
      if (buffer.length > MAX_JSON_LINE) throw new ApiError(502, 'stream_failed', 'the answer sent a line too long to read');
    }
  } finally {
    reader.releaseLock();
  }
  line(buffer);
}

/**
 * Opens the WebSocket at a session's `rest` (e.g. `/pty?cols=80&rows=24`): asks for a ticket
 * that opens this one connection within 30 s, and offers it as the subprotocol
 * `ticket.<ticket>` beside `sandboxd`. Throws ApiError when no ticket is given.
 */
export async function websocket(id, rest) {
  const { ticket } = await sendJSON('POST', sessionPath(id, '/tickets'), {});
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return new WebSocket(`${scheme}//${location.host}${sessionPath(id, rest)}`, ['sandboxd', `ticket.${ticket}`]);
}

export function sessionPath(id, rest = '') {
  return `/v1/sessions/${encodeURIComponent(id)}${rest}`;
}

export const api = {
  get: (path, options) => getJSON(path, options),
  post: (path, json, options) => sendJSON('POST', path, json === undefined ? {} : json, options),
  put: (path, json, options) => sendJSON('PUT', path, json, options),
  delete: async (path, options) => {
    const response = await request('DELETE', path, options);
    const text = await response.text();
    return text ? JSON.parse(text) : null;
  },
};
