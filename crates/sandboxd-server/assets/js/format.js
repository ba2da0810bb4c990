// How figures read on the page.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** 1536 -> "1.5 KiB"; 0 -> "0 B". */
export function bytes(value) {
  if (value === null || value === undefined || Number.isNaN(Number(value))) return '–';
  let n = Number(value);
  let unit = 0;
  while (n >= 1024 && unit < UNITS.length - 1) {
    n /= 1024;
    unit += 1;
  }
  const digits = unit === 0 || n >= 100 ? 0 : n >= 10 ? 1 : 2;
  return `${n.toFixed(digits).replace(/\.0+$|(\.\d*?)0+$/, '$1')} ${UNITS[unit]}`;
}

/** A size as the TOML config writes it: "1g", "256m", "64k", or bytes. */
export function configSize(value) {
  const n = Number(value);
  for (const [suffix, factor] of [['g', 1024 ** 3], ['m', 1024 ** 2], ['k', 1024]]) {
    if (n >= factor && n % factor === 0) return `${n / factor}${suffix}`;
  }
  return String(n);
}

/** Milliseconds: "42 ms", "1.25 s", "2 min 5 s". */
export function millis(ms) {
  if (ms === null || ms === undefined) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  return seconds(Math.round(ms / 1000));
}

/** Seconds: "12 s", "3 min", "1 h 5 min", "2 d 3 h". */
export function seconds(total) {
  if (total === null || total === undefined) return '–';
  const s = Math.max(0, Math.floor(total));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 && m < 10 ? `${m} min ${s % 60} s` : `${m} min`;
  const hours = Math.floor(m / 60);
  if (hours < 24) return m % 60 ? `${hours} h ${m % 60} min` : `${hours} h`;
  const days = Math.floor(hours / 24);
  return hours % 24 ? `${days} d ${hours % 24} h` : `${days} d`;
}

export function cpus(value) {
  const n = Number(value);
  return `${Number.isInteger(n) ? n : n.toFixed(2).replace(/0+$/, '')} CPU${n === 1 ? '' : 's'}`;
}

export function count(value) {
  if (value === null || value === undefined) return '–';
  return Number(value).toLocaleString('en-US');
}

/** A runtime's ceilings in one line: "1 GiB memory · 1 CPU · 512 processes · no network". */
export function limits(runtime) {
  if (!runtime) return '';
  return [
    `${bytes(runtime.mem_limit_bytes)} memory`,
    cpus(runtime.cpus),
    `${count(runtime.pids_limit)} processes`,
    runtime.network_mode === 'none' ? 'no network' : `network: ${runtime.network_mode}`,
  ].join(' · ');
}

/**
 * What a session's memory counts against: its own ceiling on the host when the service gives
 * one (on gVisor the runtime's memory plus the sandbox's kernel and memory-backed places), else
 * its runtime's; null when neither is known.
 */
export function memoryCeiling(session, runtime) {
  return session.memory_limit_bytes || (runtime ? runtime.mem_limit_bytes : null);
}

const timeFormat = new Intl.DateTimeFormat(undefined, {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hour12: false,
});
const dateFormat = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hour12: false,
});

/** An RFC 3339 time: the clock time today, the date otherwise. */
export function when(rfc3339) {
  if (!rfc3339) return '–';
  const date = new Date(rfc3339);
  if (Number.isNaN(date.getTime())) return String(rfc3339);
  const today = new Date();
  return date.toDateString() === today.toDateString() ? timeFormat.format(date) : dateFormat.format(date);
}

/** An RFC 3339 time always with its date: "6 Dec 2026, 10:12" (files, snapshots). */
export function dateTime(rfc3339) {
  if (!rfc3339) return '–';
  const date = new Date(rfc3339);
  return Number.isNaN(date.getTime()) ? String(rfc3339) : dateFormat.format(date);
}

/** A short id for tables: the first 12 characters. */
export function shortId(id) {
  const text = String(id);
  return text.length > 14 ? `${text.slice(0, 12)}…` : text;
}
