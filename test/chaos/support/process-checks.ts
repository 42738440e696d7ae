// From the processes' exits, stderr and JSON logs: nothing died that the
// suite did not kill, and no write failed except as the faults explain
// (a conflict, or the API server unreachable). Each incarnation is judged
// once, in the run during which it ended (or at the end of the session).
import { readFileSync } from 'node:fs';
import type { Fleet } from './fleet.ts';
import type { Incarnation } from './process-slot.ts';

function read(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function tail(text: string, lines = 15): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

function exitProblem(inc: Incarnation): string | undefined {
  const exit = inc.exit;
  if (!exit) return 'still running';
  if (inc.endedBy === 'SIGKILL')
    return exit.signal === 'SIGKILL' ? undefined : `ended ${JSON.stringify(exit)} before our SIGKILL`;
  if (inc.endedBy === 'SIGTERM') return exit.code === 0 ? undefined : `graceful stop ended ${JSON.stringify(exit)}`;
  return `died on its own: ${JSON.stringify(exit)}`;
}

interface LogLine {
  /** pino's label (the operator logs labels) or number. */
  level: string | number;
  msg?: string;
  err?: { type?: string; message?: string; code?: number | string };
}

/** Messages that report a write that failed (the product retries or hands the run over). */
const WRITE_FAILURE = /write failed|could not write|not written|could not record|could not release|could not renew/;
/** Error-level messages a fault explains when their error does (see acceptableError); any other error-level line is a finding. */
const EXPECTED_ERRORS = new Set([
  'journal write failed during the run; it will be taken over again',
  'journal write failed; the run will be taken over again',
  'could not write the final status; the run will be taken over again',
  'periodic task pass failed; next pass on schedule',
]);

/**
 * Masakari logs a recovery that failed at error level (notification-processor.ts); a Nova fault explains
 * it, and the invariants require that the retry finished it.
 */
const RECOVERY_FAILED = /^Failed to process notification '[0-9a-f-]+'\. Reason: /;
const expectedError = (msg: string): boolean => EXPECTED_ERRORS.has(msg) || RECOVERY_FAILED.test(msg);

/**
 * A conflict (409: someone else wrote first, or our fencing token lost) or the API server out of
 * reach (a transport error, a timeout, 429/5xx while it starts or stalls). A 400/403/404/422 would
 * be a write the product should not have sent.
 */
function acceptableError(err: LogLine['err']): boolean {
  if (!err) return true;
  if (err.type !== 'KubeError') return true;
  const code = Number(err.code);
  // code 0: the transport failed (refused, reset, timed out): src/k8s/errors.ts errorFromTransport
  return code === 0 || code === 409 || code === 429 || code >= 500;
}

const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };
const levelOf = (l: LogLine): number => (typeof l.level === 'number' ? l.level : (LEVELS[l.level] ?? 60));

/** How far each incarnation's log has been judged (bytes), so each line is judged in one run only. */
const scanned = new WeakMap<Incarnation, number>();
const judged = new WeakSet<Incarnation>();

function newLogProblems(inc: Incarnation): string[] {
  const out: string[] = [];
  const text = read(inc.stdoutPath);
  const from = scanned.get(inc) ?? 0;
  // a running process may be half-way through a line: judge whole lines only, unless it has ended
  const to = inc.exit ? text.length : text.lastIndexOf('\n') + 1;
  if (to <= from) return out;
  scanned.set(inc, to);
  for (const raw of text.slice(from, to).split('\n')) {
    if (!raw.trim()) continue;
    let line: LogLine;
    try {
      line = JSON.parse(raw) as LogLine;
    } catch {
      // a line cut by SIGKILL is expected; anything else on stdout is not a JSON log line
      if (inc.endedBy !== 'SIGKILL') out.push(`not a JSON log line: ${raw.slice(0, 300)}`);
      continue;
    }
    const msg = line.msg ?? '';
    if (WRITE_FAILURE.test(msg) && !acceptableError(line.err)) out.push(`failed write: ${raw.slice(0, 600)}`);
    else if (levelOf(line) >= 50 && !(expectedError(msg) && acceptableError(line.err)))
      out.push(`error logged: ${raw.slice(0, 600)}`);
  }
  return out;
}

/** Problems since the last call: new log lines of every incarnation, and how each newly ended one ended. */
export function checkProcesses(fleet: Fleet): string[] {
  const out: string[] = [];
  for (const slot of fleet.all()) {
    for (const [n, inc] of slot.incarnations.entries()) {
      if (judged.has(inc)) continue;
      const who = `${slot.name}#${n} (pid ${inc.pid})`;
      out.push(...newLogProblems(inc).map((p) => `${who} ${p}`));
      if (!inc.exit) continue;
      judged.add(inc);
      const problem = exitProblem(inc);
      const stderr = read(inc.stderrPath);
      if (problem) out.push(`${who} ${problem}; stderr:\n${tail(stderr)}\nstdout:\n${tail(read(inc.stdoutPath))}`);
      else if (stderr.trim()) out.push(`${who} wrote to stderr:\n${tail(stderr)}`);
    }
  }
  return out;
}
