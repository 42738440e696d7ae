// One operator replica as the chaos suite runs it: a slot (engine-0, api-1, ...)
// whose process is started from src/main.ts exactly as a user would, on fixed
// ports, and may be killed, frozen and restarted; every incarnation is kept
// with how it ended, so the invariants can tell the deaths the suite caused
// from any other.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const nodeBin = path.join(root, 'node_modules/.bin/node');

export interface Incarnation {
  pid: number;
  stdoutPath: string;
  stderrPath: string;
  /** What the suite did to it: SIGKILL (a fault) or SIGTERM (the end of the run). */
  endedBy?: 'SIGKILL' | 'SIGTERM';
  exit?: { code: number | null; signal: NodeJS.Signals | null };
  exited: Promise<void>;
  child: ChildProcess;
}

export interface SlotOptions {
  name: string;
  env: NodeJS.ProcessEnv;
  metricsPort: number;
  logDir: string;
  readyTimeoutMs: number;
  /** Engines: the file of their wall-clock offset (skewed-clock.ts, loaded into the process). */
  clockFile?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class ProcessSlot {
  readonly incarnations: Incarnation[] = [];
  constructor(private readonly o: SlotOptions) {}

  get name(): string {
    return this.o.name;
  }
  get metricsUrl(): string {
    return `http://127.0.0.1:${this.o.metricsPort}`;
  }
  get current(): Incarnation | undefined {
    const last = this.incarnations.at(-1);
    return last && !last.exit ? last : undefined;
  }

  /** Starts a new incarnation and waits for /readyz (it throws past readyTimeoutMs). */
  async start(): Promise<void> {
    const n = this.incarnations.length;
    const stdoutPath = path.join(this.o.logDir, `${this.o.name}.${n}.out.jsonl`);
    const stderrPath = path.join(this.o.logDir, `${this.o.name}.${n}.err.txt`);
    const skew = this.o.clockFile ? ['--import', path.join(root, 'test/chaos/support/skewed-clock.ts')] : [];
    const args = ['--unhandled-rejections=strict', '--import', 'tsx', ...skew, path.join(root, 'src/main.ts')];
    const env = this.o.clockFile ? { ...this.o.env, MASAKARI_CHAOS_CLOCK_FILE: this.o.clockFile } : this.o.env;
    const child = spawn(nodeBin, args, {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.pipe(createWriteStream(stdoutPath));
    child.stderr.pipe(createWriteStream(stderrPath));
    const inc: Incarnation = {
      pid: child.pid ?? -1,
      stdoutPath,
      stderrPath,
      child,
      exited: new Promise<void>((resolve) =>
        child.once('exit', (code, signal) => {
          inc.exit = { code, signal };
          resolve();
        }),
      ),
    };
    this.incarnations.push(inc);
    await this.waitReady(inc);
  }

  private async waitReady(inc: Incarnation): Promise<void> {
    const deadline = Date.now() + this.o.readyTimeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      if (inc.exit) throw new Error(`${this.name} exited while starting (${JSON.stringify(inc.exit)})`);
      try {
        const r = await fetch(`${this.metricsUrl}/readyz`, { signal: AbortSignal.timeout(2_000) });
        last = `${r.status} ${await r.text()}`;
        if (r.status === 200) return;
      } catch (e) {
        last = (e as Error).message;
      }
      await sleep(200);
    }
    throw new Error(`${this.name} not ready after ${this.o.readyTimeoutMs} ms (${last})`);
  }

  /** SIGKILL, as a crash or an OOM kill would. */
  async kill(): Promise<void> {
    const inc = this.current;
    if (!inc) return;
    inc.endedBy = 'SIGKILL';
    inc.child.kill('SIGKILL');
    await inc.exited;
  }

  signal(sig: 'SIGSTOP' | 'SIGCONT'): void {
    this.current?.child.kill(sig);
  }

  /**
   * Skews this slot's wall clock by offsetMs from now on, restarts included (skewed-clock.ts); resolves
   * once the running process applied it. Only for slots started with a clockFile.
   */
  async setClockOffset(offsetMs: number, timeoutMs = 10_000): Promise<void> {
    const file = this.o.clockFile;
    if (!file) throw new Error(`${this.name} has no skewable clock`);
    writeFileSync(file, String(offsetMs));
    const inc = this.current;
    if (!inc) return; // the next start reads the file
    rmSync(`${file}.applied`, { force: true });
    inc.child.kill('SIGUSR2');
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      let applied: string | undefined;
      try {
        applied = readFileSync(`${file}.applied`, 'utf8');
      } catch {
        // not yet
      }
      if (applied === String(offsetMs)) return;
      if (Date.now() > deadline) throw new Error(`${this.name} did not apply the clock offset ${offsetMs} ms`);
      await sleep(50);
    }
  }

  /** SIGTERM (graceful stop); SIGKILL after graceMs, which the invariants then report. */
  async stop(graceMs: number): Promise<void> {
    const inc = this.current;
    if (!inc) return;
    inc.endedBy = 'SIGTERM';
    inc.child.kill('SIGCONT'); // a frozen process cannot stop
    inc.child.kill('SIGTERM');
    const timer = setTimeout(() => inc.child.kill('SIGKILL'), graceMs);
    await inc.exited;
    clearTimeout(timer);
  }

  /** 1 when this incarnation leads the named lease (leader_election_master_status). */
  async leads(lease: string): Promise<boolean> {
    if (!this.current) return false;
    try {
      const r = await fetch(`${this.metricsUrl}/metrics`, { signal: AbortSignal.timeout(2_000) });
      const text = await r.text();
      return new RegExp(`^leader_election_master_status\\{name="${lease}"\\} 1$`, 'm').test(text);
    } catch {
      return false;
    }
  }
}
