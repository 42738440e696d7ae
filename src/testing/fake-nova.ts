// FOR UNIT TESTS ONLY: the one in-process Nova of the unit tests. It keeps
// Nova's rules that recovery depends on (nova/compute/api.py): evacuate needs
// the source nova-compute down (400 "still in use"), a vm_state of active,
// stopped or error and no task_state (409), and an enabled, up target (400
// "No valid host"); an accepted evacuation is an evacuation migration row and
// task_state rebuilding for evacuateMs; stop takes stopMs in powering-off;
// start needs vm_state stopped (409); a second add of an aggregate member is
// 409. Tests script the rest: per-call faults (fault, failNext), servers whose
// rebuild fails or whose evacuation finds no host, Nova's clock off the
// engine's (clockOffsetMs, for the migrations' created_at), and hooks on the wire view of a server (onGet, onStop,
// onStart). Every call is recorded.
//
// Tests that need Nova's HTTP surface (paging, microversions, Keystone) use
// the simulator (tools/simulator) through the real client instead.
import { randomUUID } from 'node:crypto';
import type {
  CallOptions,
  GlanceImage,
  NovaAggregate,
  NovaClient,
  NovaMigration,
  NovaServer,
  NovaService,
} from '../openstack/types.ts';
import { NovaBadRequest, NovaConflict, NovaError, NovaNotFound } from '../openstack/types.ts';
import type { FakeServer } from './nova/servers.ts';
import { fromWire, isWireServer, powerFor, view } from './nova/servers.ts';

export { makeServer } from './nova/servers.ts';
export type { FakeServer } from './nova/servers.ts';

export type NovaMethod = keyof NovaClient;

export interface FakeNovaOptions {
  /** Milliseconds an accepted evacuation stays in task_state rebuilding. Default 20. */
  evacuateMs?: number;
  /** Milliseconds a stop stays in powering-off; 0 stops at once. Default 10. */
  stopMs?: number;
  /** Nova's clock minus the real clock, in ms (negative: Nova is behind). Default 0. */
  clockOffsetMs?: number;
}

type Fault = (method: string, args: unknown[]) => Error | undefined;
type ServerHook = (s: NovaServer) => void;

/** A service record as Nova lists it (GET /os-services): nova-compute, enabled and up, unless `over` says otherwise. */
export function novaService(host: string, over: Partial<NovaService> = {}): NovaService {
  const binary = over.binary ?? 'nova-compute';
  return {
    id: `svc-${host}-${binary}`,
    binary,
    host,
    zone: 'nova',
    status: 'enabled',
    state: 'up',
    disabled_reason: null,
    forced_down: false,
    ...over,
  };
}

export class FakeNova implements NovaClient {
  readonly services: NovaService[] = [];
  readonly servers = new Map<string, FakeServer>();
  readonly aggregates: NovaAggregate[] = [];
  /** Glance's images by id, for getImage. */
  readonly images = new Map<string, GlanceImage>();
  readonly migrations: NovaMigration[] = [];
  /** Every call with its arguments (callLines() has them as "method first-arg"). */
  readonly calls: Array<{ method: NovaMethod; args: unknown[] }> = [];
  /** Accepted evacuations per server, with their target argument. */
  readonly evacuations: Array<{ id: string; target: string | undefined }> = [];
  /** Servers whose rebuild fails on the destination (ends in vm_state error). */
  readonly failingRebuilds = new Set<string>();
  /**
   * Servers whose accepted evacuation finds no host in the scheduler
   * (nova/conductor/manager.py rebuild_instance): the migration ends `error`,
   * the server stays on its host with task_state cleared.
   */
  readonly unscheduledEvacuations = new Set<string>();
  /** Nova's clock minus the real clock (ms): the created_at of the migrations it records. */
  clockOffsetMs: number;
  /** Returns an error to throw instead of performing the call. */
  fault: Fault | undefined;
  /** Replaces the modelled stop: called at once on the server's wire view (e.g. () => {} never stops). */
  onStop: ServerHook | undefined;
  /** Replaces the modelled start, as onStop. */
  onStart: ServerHook | undefined;
  /** Called on every getServer with the server's wire view, e.g. to make a change appear after N polls. */
  onGet: ServerHook = () => {};
  /** Called on every listServices, e.g. to make Nova ignore a disable. */
  onListServices: () => void = () => {};
  evacuateMs: number;
  stopMs: number;
  private readonly failures = new Map<NovaMethod, Error[]>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private migrationId = 0;

  constructor(o: FakeNovaOptions = {}) {
    this.evacuateMs = o.evacuateMs ?? 20;
    this.stopMs = o.stopMs ?? 10;
    this.clockOffsetMs = o.clockOffsetMs ?? 0;
  }

  /** Now by Nova's clock, as Nova writes it (naive UTC, microseconds). */
  novaNow(): string {
    return new Date(Date.now() + this.clockOffsetMs).toISOString().replace('Z', '000');
  }

  /** A nova-compute service (and so a compute host). */
  addHost(
    host: string,
    o: Partial<Pick<NovaService, 'status' | 'state' | 'forced_down' | 'disabled_reason'>> = {},
  ): NovaService {
    return this.addService(host, 'nova-compute', o);
  }

  addService(host: string, binary = 'nova-compute', over: Partial<NovaService> = {}): NovaService {
    const service = novaService(host, { binary, ...over });
    this.services.push(service);
    return service;
  }

  service(host: string): NovaService {
    const s = this.services.find((x) => x.host === host);
    if (!s) throw new Error(`fake nova: no service on ${host}`);
    return s;
  }

  /** Adds a server, given in the fake's fields or as Nova shows it (makeServer). */
  addServer(input: (Partial<FakeServer> & { host: string }) | NovaServer): FakeServer {
    const s = isWireServer(input) ? fromWire(input) : input;
    const vmState = s.vmState ?? 'active';
    const server: FakeServer = {
      id: s.id ?? randomUUID(),
      name: s.name ?? `vm-${this.servers.size + 1}`,
      host: s.host,
      node: s.node,
      vmState,
      taskState: s.taskState ?? null,
      powerState: s.powerState ?? powerFor(vmState),
      locked: s.locked ?? false,
      metadata: s.metadata ?? {},
      ...(s.flavorExtraSpecs ? { flavorExtraSpecs: s.flavorExtraSpecs } : {}),
      ...(s.imageId ? { imageId: s.imageId } : {}),
    };
    this.servers.set(server.id, server);
    return server;
  }

  /** The next call(s) of `method` throw these errors, in order. */
  failNext(method: NovaMethod, ...errors: Error[]): void {
    this.failures.set(method, [...(this.failures.get(method) ?? []), ...errors]);
  }

  count(method: NovaMethod): number {
    return this.calls.filter((c) => c.method === method).length;
  }

  /** The calls as "method first-argument" lines, e.g. "evacuate <id>". */
  callLines(): string[] {
    return this.calls.map(({ method, args }) => {
      const [first] = args;
      return `${method} ${typeof first === 'string' ? first : JSON.stringify(first ?? '')}`;
    });
  }

  evacuationsOf(id: string): number {
    return this.evacuations.filter((e) => e.id === id).length;
  }

  /** Cancels the pending state changes (a test's cleanup). */
  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  // ------------------------------------------------------------------ NovaClient

  async listServices(q: { host?: string; binary?: string }, _o?: CallOptions): Promise<NovaService[]> {
    this.enter('listServices', [q.host, q]);
    this.onListServices();
    return this.services
      .filter((s) => (!q.host || s.host === q.host) && (!q.binary || s.binary === q.binary))
      .map((s) => ({ ...s }));
  }

  async updateService(
    id: string,
    body: { status?: 'enabled' | 'disabled'; disabled_reason?: string; forced_down?: boolean },
    _o?: CallOptions,
  ): Promise<NovaService> {
    this.enter('updateService', [id, body]);
    const s = this.services.find((x) => x.id === id);
    if (!s) throw new NovaNotFound(404, `Service ${id} not found.`);
    if (body.status) {
      s.status = body.status;
      s.disabled_reason = body.status === 'disabled' ? (body.disabled_reason ?? null) : null;
    }
    if (body.forced_down !== undefined) s.forced_down = body.forced_down;
    return { ...s };
  }

  async listServersOnHost(host: string, _o?: CallOptions): Promise<NovaServer[]> {
    this.enter('listServersOnHost', [host]);
    return [...this.servers.values()].filter((s) => s.host === host).map((s) => view(s));
  }

  async getServer(id: string, _o?: CallOptions): Promise<NovaServer> {
    this.enter('getServer', [id]);
    const s = this.must(id);
    this.hook(s, this.onGet);
    return view(s);
  }

  async resetState(id: string, state: 'error' | 'active', _o?: CallOptions): Promise<void> {
    this.enter('resetState', [id, state]);
    const s = this.must(id);
    s.vmState = state;
    s.taskState = null;
  }

  async evacuate(id: string, targetHost: string | undefined, _o?: CallOptions): Promise<void> {
    this.enter('evacuate', [id, targetHost]);
    const s = this.must(id);
    const source = this.service(s.host);
    if (source.state === 'up' && !source.forced_down) {
      throw new NovaBadRequest(400, `Compute service of ${s.host} is still in use.`);
    }
    if (!['active', 'stopped', 'error'].includes(s.vmState) || s.taskState !== null) {
      throw new NovaConflict(409, `Cannot 'evacuate' instance ${id} while it is in vm_state ${s.vmState}`);
    }
    const candidates = this.services.filter(
      (x) => x.host !== s.host && x.status === 'enabled' && x.state === 'up' && !x.forced_down,
    );
    const target = targetHost ? candidates.find((x) => x.host === targetHost) : candidates[0];
    if (!target) throw new NovaBadRequest(400, `No valid host was found.`);
    this.evacuations.push({ id, target: targetHost });
    const migration: NovaMigration = {
      id: ++this.migrationId,
      uuid: randomUUID(),
      instance_uuid: id,
      migration_type: 'evacuation',
      source_compute: s.host,
      dest_compute: target.host,
      status: 'accepted',
      created_at: this.novaNow(),
      updated_at: null,
    };
    this.migrations.push(migration);
    s.taskState = 'rebuilding';
    this.later(this.evacuateMs, () => {
      s.taskState = null;
      if (this.unscheduledEvacuations.has(id)) {
        migration.status = 'error';
        return;
      }
      s.host = target.host;
      s.node = undefined;
      if (this.failingRebuilds.has(id)) {
        s.vmState = 'error';
        migration.status = 'failed';
        return;
      }
      if (s.vmState === 'error') s.vmState = 'active';
      s.powerState = powerFor(s.vmState);
      migration.status = 'done';
    });
  }

  async stopServer(id: string, _o?: CallOptions): Promise<void> {
    this.enter('stopServer', [id]);
    const s = this.must(id);
    if (this.onStop) return this.hook(s, this.onStop);
    if (!['active', 'error'].includes(s.vmState)) {
      throw new NovaConflict(409, `Cannot 'stop' instance ${id} while it is in vm_state ${s.vmState}`);
    }
    const stopped = (): void => {
      s.taskState = null;
      s.vmState = 'stopped';
      s.powerState = 4;
    };
    if (this.stopMs === 0) return stopped();
    s.taskState = 'powering-off';
    this.later(this.stopMs, stopped);
  }

  async startServer(id: string, _o?: CallOptions): Promise<void> {
    this.enter('startServer', [id]);
    const s = this.must(id);
    if (s.vmState !== 'stopped') {
      throw new NovaConflict(409, `Cannot 'start' instance ${id} while it is in vm_state ${s.vmState}`);
    }
    if (this.onStart) return this.hook(s, this.onStart);
    s.vmState = 'active';
    s.powerState = 1;
  }

  async lockServer(id: string, _o?: CallOptions): Promise<void> {
    this.enter('lockServer', [id]);
    this.must(id).locked = true;
  }

  async unlockServer(id: string, _o?: CallOptions): Promise<void> {
    this.enter('unlockServer', [id]);
    this.must(id).locked = false;
  }

  async listAggregates(_o?: CallOptions): Promise<NovaAggregate[]> {
    this.enter('listAggregates', []);
    return this.aggregates.map((a) => ({ ...a, hosts: [...a.hosts] }));
  }

  async getImage(id: string, _o?: CallOptions): Promise<GlanceImage> {
    this.enter('getImage', [id]);
    const image = this.images.get(id);
    if (!image) throw new NovaNotFound(404, `No image found with ID ${id}`);
    return { ...image };
  }

  async addHostToAggregate(aggregateId: number, host: string, _o?: CallOptions): Promise<void> {
    this.enter('addHostToAggregate', [aggregateId, host]);
    const a = this.aggregates.find((x) => x.id === aggregateId);
    if (!a) throw new NovaNotFound(404, `Aggregate ${aggregateId} could not be found.`);
    if (a.hosts.includes(host)) {
      throw new NovaConflict(409, `Cannot add host ${host} in aggregate ${aggregateId}: host exists`);
    }
    a.hosts.push(host);
  }

  async listMigrations(
    q: { instanceUuid?: string; migrationType?: string; sourceCompute?: string },
    _o?: CallOptions,
  ): Promise<NovaMigration[]> {
    this.enter('listMigrations', [q.instanceUuid, q]);
    return this.migrations
      .filter(
        (m) =>
          (!q.instanceUuid || m.instance_uuid === q.instanceUuid) &&
          (!q.migrationType || m.migration_type === q.migrationType) &&
          (!q.sourceCompute || m.source_compute === q.sourceCompute),
      )
      .map((m) => ({ ...m }));
  }

  // ------------------------------------------------------------------ internals

  private enter(method: NovaMethod, args: unknown[]): void {
    this.calls.push({ method, args });
    const scripted = this.failures.get(method)?.shift();
    if (scripted) throw scripted;
    const err = this.fault?.(method, args);
    if (err) throw err;
  }

  private must(id: string): FakeServer {
    const s = this.servers.get(id);
    if (!s) throw new NovaNotFound(404, `Instance ${id} could not be found.`);
    return s;
  }

  /** Runs a test's hook on the wire view and keeps what it changed. */
  private hook(s: FakeServer, fn: ServerHook): void {
    const v = view(s);
    fn(v);
    Object.assign(s, fromWire(v));
  }

  private later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }
}

/** A Nova 5xx as the HTTP client reports it. */
export const novaServerError = (message = 'Internal Server Error'): NovaError => new NovaError(500, message);
