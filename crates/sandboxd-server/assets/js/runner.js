// Runs one command in a session, streaming its output as it comes.
//
// One request does it: POST /v1/sessions/{id}/processes/run starts the command (with its
// input, for the Source pane) and answers with server-sent events: `start` (the process),
// `stdout`, `stderr`, `dropped`, then `exit` with the process's final state. That is one
// operation, so one entry in the activity log. The stream is read with fetch and the token
// in the Authorization header (EventSource cannot send one). A stream that breaks off is
// resumed from the last offset received (GET .../processes/{pid}/stream). Stop sends SIGINT
// to the command's process group, and a second Stop sends SIGKILL.
//
// A service without that route (404 "no such route") gets the command through exec instead:
// the output then appears when the command ends.

import { api, request, readEventStream, sessionPath, ApiError } from './api.js';

const MAX_RESUMES = 3;
let streamingAvailable = true;

/**
 * Runs `req` ({command} or {argv, input: "text"}) and resolves with an exec-like result:
 * {exit_code, signal, timed_out, oom_killed, duration_ms, timeout_secs, dropped}.
 * `write(stream, text)` receives output ('stdout' or 'stderr'), `dropped(bytes)` what the
 * service could not keep; `onStart({stop, streaming})` is called once the command runs.
 */
export async function runCommand(id, req, handlers) {
  if (streamingAvailable) {
    try {
      return await runStreaming(id, req, handlers);
    } catch (error) {
      if (!(error instanceof NoProcessApi)) throw error;
      streamingAvailable = false;
    }
  }
  return runExec(id, req, handlers);
}

class NoProcessApi extends Error {}

async function runStreaming(id, req, { write, dropped, onStart }) {
  // Python buffers its output when it is not on a terminal; unbuffered, it streams.
  const start = { env: { PYTHONUNBUFFERED: '1' } };
  if (req.command !== undefined) start.command = req.command;
  if (req.argv !== undefined) start.argv = req.argv;
  if (req.input !== undefined) start.input = req.input;
  const abort = new AbortController();
  let response;
  try {
    response = await request('POST', sessionPath(id, '/processes/run'), {
      json: start,
      headers: { Accept: 'text/event-stream' },
      signal: abort.signal,
    });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404 && /no such route/i.test(error.message)) {
      throw new NoProcessApi();
    }
    throw error;
  }
  let base = null;
  let signals = 0;
  const stop = async () => {
    if (!base) return;
    signals += 1;
    try {
      await api.post(`${base}/signal`, { signal: signals > 1 ? 'KILL' : 'INT' });
    } catch {
      // it may have exited meanwhile; the stream says how it ended
    }
  };
  let since = 0;
  let finished = null;
  let failure = null;
  let timeoutSecs = null;
  const onEvent = ({ event, data, id: eventId }) => {
    const body = data ? JSON.parse(data) : {};
    if (event === 'stdout' || event === 'stderr') write(event, body.text || '');
    else if (event === 'dropped') dropped(body.bytes || 0);
    else if (event === 'start') {
      base = sessionPath(id, `/processes/${encodeURIComponent(body.id)}`);
      timeoutSecs = body.timeout_secs;
      onStart({ stop, streaming: true, timeoutSecs });
    } else if (event === 'exit') finished = body;
    else if (event === 'error') failure = new ApiError(502, body.code || 'agent_error', body.message || 'the stream failed');
    if (eventId && /^\d+$/.test(eventId)) since = Number(eventId);
  };
  for (let attempt = 0; attempt <= MAX_RESUMES && !finished; attempt += 1) {
    try {
      if (attempt > 0) {
        if (!base) throw failure || new ApiError(502, 'stream_failed', 'the command\'s output stream broke off before it started');
        response = await request('GET', `${base}/stream?since=${since}`, {
          headers: { Accept: 'text/event-stream' },
          signal: abort.signal,
        });
      }
      await readEventStream(response, onEvent);
      if (failure) throw failure;
    } catch (error) {
      const final = error instanceof ApiError && error.status >= 400 && error.status < 500;
      if (error === failure || final || attempt === MAX_RESUMES) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500 * (attempt + 1)));
    }
  }
  if (!finished && base) finished = await api.get(base);
  return { ...finished, timeout_secs: finished?.timeout_secs ?? timeoutSecs };
}

async function runExec(id, req, { write, onStart }) {
  onStart({ stop: null, streaming: false });
  const body = { env: { PYTHONUNBUFFERED: '1' } };
  if (req.command !== undefined) body.command = req.command;
  if (req.argv !== undefined) body.argv = req.argv;
  if (req.input !== undefined) body.stdin = req.input;
  const result = await api.post(sessionPath(id, '/exec'), body);
  write('stdout', result.stdout);
  write('stderr', result.stderr);
  return result;
}
