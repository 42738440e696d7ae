// What ties an emulated BMC to its host in the mini cloud: the host's power.
// When a BMC's power state turns Off, the host's nova-compute is SIGKILLed
// before the BMC can report Off to anyone (so Nova sees exactly what a power
// cut causes); when it turns On, nova-compute starts again. Every change is
// logged with its time, so a test can compare it with the Nova transcript of
// the recording proxy (recorder.ts).
//
// An HTTP server on loopback receives the changes: sushy-emulator's fake
// driver PUTs a system to its EXTERNAL_NOTIFICATION_URL whenever it changes
// (a power request, then the new state once applied), and the chassis control
// program of each ipmi_sim (ipmi.ts) asks and sets its host's power here.

import { createServer, type Server } from 'node:http';

export type BmcKind = 'redfish' | 'ipmi';

export interface PowerEvent {
  seq: number;
  /** When the BMC's power state changed (ISO, ms). */
  at: string;
  host: string;
  bmc: BmcKind;
  power: 'On' | 'Off';
  /** What the link did to the host's nova-compute. */
  compute: 'killed' | 'started' | 'was stopped' | 'was running';
}

export interface LinkedCloud {
  computes: string[];
  computeRunning(host: string): boolean;
  killCompute(host: string): Promise<void>;
  startCompute(host: string, waitUp?: boolean): Promise<void>;
}

export interface PowerLink {
  port: number;
  /** Records a power change and applies it to the host; resolves once an Off has killed the compute. */
  power(host: string, bmc: BmcKind, power: 'On' | 'Off'): Promise<void>;
  /** IPMI power as ipmi_sim's chassis control reads it (1 on, 0 off). */
  ipmiPower(host: string): 0 | 1;
  events(since: number): PowerEvent[];
  lastSeq(): number;
  /** Waits for the nova-compute starts still under way. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** The fields of a sushy-emulator fake system the link reads (fakedriver.py). */
interface FakeSystem {
  name?: string;
  power_state?: string;
  pending_power?: { power_state?: string; apply_time?: number } | null;
}

export async function startPowerLink(
  cloud: LinkedCloud,
  port: number,
  /** Called with a host whose Redfish power request will apply at apply_time (epoch s): read it then. */
  onRedfishPending: (host: string, applyAtMs: number) => void,
  log: (line: string) => void,
): Promise<PowerLink> {
  const events: PowerEvent[] = [];
  let seq = 0;
  const starts = new Map<string, Promise<void>>();
  const ipmi = new Map<string, 0 | 1>(cloud.computes.map((h) => [h, 1]));
  const redfish = new Map<string, string>(cloud.computes.map((h) => [h, 'On']));

  const power = async (host: string, bmc: BmcKind, state: 'On' | 'Off'): Promise<void> => {
    if (!cloud.computes.includes(host)) throw new Error(`no compute ${host}`);
    const at = new Date().toISOString();
    let compute: PowerEvent['compute'];
    let killed: Promise<void> | undefined;
    if (state === 'Off') {
      compute = cloud.computeRunning(host) ? 'killed' : 'was stopped';
      // killCompute sends SIGKILL at once and then waits for the process to be reaped: the event is recorded
      // before that wait, so it is there even when a loaded machine reaps it after the BMC has answered Off
      if (compute === 'killed') killed = cloud.killCompute(host);
    } else {
      compute = cloud.computeRunning(host) ? 'was running' : 'started';
      // only the process: Nova reports a forced-down service down even once nova-compute runs and reports,
      // and clearing forced_down is the return to service's business (or the reset's), not the power's
      if (compute === 'started') {
        const start = cloud
          .startCompute(host, false)
          .catch((e: unknown) => log(`power link: nova-compute on ${host} did not start: ${String(e)}`))
          .finally(() => starts.delete(host));
        starts.set(host, start);
      }
    }
    events.push({ seq: ++seq, at, host, bmc, power: state, compute });
    log(`power link: ${bmc} BMC of ${host} ${state}; nova-compute ${compute}`);
    await killed;
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const reply = (status: number, text: string) => {
        res.writeHead(status, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      };
      const path = req.url ?? '/';
      const ipmiGet = /^\/ipmi\/([^/]+)\/power$/.exec(path);
      const ipmiSet = /^\/ipmi\/([^/]+)\/power\/([01])$/.exec(path);
      const handle = async (): Promise<[number, string]> => {
        if (req.method === 'PUT' && path === '/redfish/notify') {
          const system = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as FakeSystem;
          const host = system.name ?? '';
          if (!cloud.computes.includes(host)) return [404, `no compute ${host}`];
          const pending = system.pending_power;
          // a power request: the fake driver applies it at apply_time, on the next read of the system
          if (pending?.apply_time) onRedfishPending(host, pending.apply_time * 1000);
          const state = system.power_state;
          if ((state === 'On' || state === 'Off') && redfish.get(host) !== state) {
            redfish.set(host, state);
            await power(host, 'redfish', state);
          }
          return [204, ''];
        }
        if (req.method === 'GET' && ipmiGet) {
          const host = decodeURIComponent(ipmiGet[1] ?? '');
          if (!ipmi.has(host)) return [404, `no compute ${host}`];
          return [200, String(ipmi.get(host))];
        }
        if (req.method === 'POST' && ipmiSet) {
          const host = decodeURIComponent(ipmiSet[1] ?? '');
          if (!ipmi.has(host)) return [404, `no compute ${host}`];
          const want = ipmiSet[2] === '1' ? 1 : 0;
          if (ipmi.get(host) !== want) {
            ipmi.set(host, want);
            await power(host, 'ipmi', want ? 'On' : 'Off');
          }
          return [200, 'ok'];
        }
        return [404, `no route ${req.method} ${path}`];
      };
      handle().then(
        ([status, text]) => reply(status, text),
        (e: unknown) => reply(500, e instanceof Error ? e.message : String(e)),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    port,
    power,
    ipmiPower: (host) => ipmi.get(host) ?? 0,
    events: (since) => events.filter((e) => e.seq > since),
    lastSeq: () => seq,
    settled: async () => {
      while (starts.size) await Promise.all([...starts.values()]);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
