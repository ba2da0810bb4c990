// Runs one command in a session, streaming its output as it comes.
//
// Streaming uses the background process API: POST /v1/sessions/{id}/processes starts the
// command (with stdin when there is input to give it), then GET .../processes/{pid}/stream
// sends its output as server-sent events (`stdout`, `stderr`, `dropped`, then `exit` with the
// process's final state). The stream is read with fetch and the token in the Authorization
// header (EventSource cannot send one; the service's `?ticket=` would serve it, but this keeps
// the resume logic here, and no credential goes in a URL at all). A stream that breaks off
// is resumed from the last offset received. Stop sends SIGINT to the command's process group,
// and a second Stop sends SIGKILL.
//
// A service without that API (404 "no such route") gets the command through exec instead:
// the output then appears when the command ends.

import { api, request, readEventStream, sessionPath, ApiError } from './api.js';

const MAX_RESUMES = 3;
let streamingAvailable = true;

/**
 * Runs `req` ({command} or {argv, stdin: "text"}) and resolves with an exec-like result:
 * {exit_code, signal, timed_out, oom_killed, stdout_truncated, stderr_truncated, duration_ms,
 * gap}. `write(stream, text)` receives output ('stdout' or 'stderr'); `onStart({stop,
 * streaming})` is called once the command runs.
 */
export async function runCommand(id, req, { write, onStart }) {
  if (streamingAvailable) {
    try {
      return await runStreaming(id, req, { write, onStart });
    } catch (error) {
      if (!(error instanceof NoProcessApi)) throw error;
      streamingAvailable = false;
    }
  }
  return runExec(id, req, { write, onStart });
}

class NoProcessApi extends Error {}

async function runStreaming(id, req, { write, onStart }) {
  // Python buffers its output when it is not on a terminal; unbuffered, it streams.
  const start = { env: { PYTHONUNBUFFERED: '1' } };
  if (req.command !== undefined) start.command = req.command;
  if (req.argv !== undefined) start.argv = req.argv;
  const input = req.stdin;
  if (input !== undefined) start.stdin = true;
  let process;
  try {
    process = await api.post(sessionPath(id, '/processes'), start);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404 && /no such route/i.test(error.message)) {
      throw new NoProcessApi();
    }
    throw error;
  }
  const base = sessionPath(id, `/processes/${encodeURIComponent(process.id)}`);
  const abort = new AbortController();
  let signals = 0;
  const stop = async () => {
    signals += 1;
    try {
      await api.post(`${base}/signal`, { signal: signals > 1 ? 'KILL' : 'INT' });
    } catch {
      // it may have exited meanwhile; the stream says how it ended
    }
  };
  onStart({ stop, streaming: true });
  if (input !== undefined) {
    // The program reads its source from stdin: give it all, then end-of-file.
    await api.post(`${base}/stdin`, { data: input, close: true });
  }
  let since = 0;
  let finished = null;
  let gap = false;
  let failure = null;
  for (let attempt = 0; attempt <= MAX_RESUMES && !finished; attempt += 1) {
    try {
      const response = await request('GET', `${base}/stream?since=${since}`, {
        headers: { Accept: 'text/event-stream' },
        signal: abort.signal,
      });
      await readEventStream(response, ({ event, data, id: eventId }) => {
        const body = data ? JSON.parse(data) : {};
        if (event === 'stdout' || event === 'stderr') write(event, body.text || '');
        else if (event === 'dropped') {
          gap = true;
          write('stderr', `\n[${body.bytes} bytes of output were dropped: the command wrote faster than it was read]\n`);
        } else if (event === 'exit') finished = body;
        else if (event === 'error') failure = new ApiError(502, body.code || 'agent_error', body.message || 'the stream failed');
        if (eventId && /^\d+$/.test(eventId)) since = Number(eventId);
      });
      if (failure) throw failure;
    } catch (error) {
      const final = error instanceof ApiError && error.status >= 400 && error.status < 500;
      if (error === failure || final || attempt === MAX_RESUMES) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500 * (attempt + 1)));
    }
  }
  if (!finished) {
    finished = await api.get(base);
  }
  return { ...finished, gap };
}

async function runExec(id, req, { write, onStart }) {
  onStart({ stop: null, streaming: false });
  const result = await api.post(sessionPath(id, '/exec'), { ...req, env: { PYTHONUNBUFFERED: '1' } });
  write('stdout', result.stdout);
  write('stderr', result.stderr);
  return result;
}
