// A small in-process Nova for the host-failure workflow's unit tests: the
// calls of the NovaClient contract with Nova's rules that matter to
// evacuation (source service must be down, vm_state/task_state preconditions,
// target picked among enabled up services, rebuilding while in flight, an
// evacuation migration row per accepted call, 409 on a duplicate aggregate
// member), plus knobs the scenarios need (latencies, per-call faults, servers
// whose rebuild fails) and counters. End-to-end tests use the real simulator
// (src/simulator) through the HTTP client instead.

import { randomUUID } from 'node:crypto';
import type {
  CallOptions,
  NovaAggregate,
  NovaClient,
  NovaMigration,
  NovaServer,
  NovaService,
} from '../../openstack/types.ts';
import { NovaBadRequest, NovaConflict, NovaError, NovaNotFound } from '../../openstack/types.ts';

export interface FakeServer {
  id: string;
  name: string;
  host: string;
  /** Node name; defaults to `<host>.nodes.example` so it differs from the service host (B11). */
  node?: string;
  vmState: string;
  taskState: string | null;
  powerState: number;
  locked: boolean;
  metadata: Record<string, string>;
}

export interface FakeNovaOptions {
  /** Milliseconds an accepted evacuation stays in task_state rebuilding. */
  evacuateMs?: number;
  stopMs?: number;
}

type Fault = (method: string, args: unknown[]) => Error | undefined;

const powerFor = (vmState: string): number => (['stopped', 'error', 'shelved'].includes(vmState) ? 4 : 1);

export class FakeNova implements NovaClient {
  readonly services = new Map<string, NovaService>();
  readonly servers = new Map<string, FakeServer>();
  readonly aggregates: NovaAggregate[] = [];
  readonly migrations: NovaMigration[] = [];
  /** Every call, as "method id-or-host". */
  readonly calls: string[] = [];
  /** Accepted evacuations per server, with their target argument. */
  readonly evacuations: Array<{ id: string; target: string | undefined }> = [];
  /** Servers whose rebuild fails on the destination (ends in vm_state error). */
  readonly failingRebuilds = new Set<string>();
  /** Returns an error to throw instead of performing the call. */
  fault: Fault | undefined;
  evacuateMs: number;
  stopMs: number;
  private timers = new Set<NodeJS.Timeout>();
  private migrationId = 0;

  constructor(o: FakeNovaOptions = {}) {
    this.evacuateMs = o.evacuateMs ?? 20;
    this.stopMs = o.stopMs ?? 10;
  }

  addHost(
    host: string,
    o: Partial<Pick<NovaService, 'status' | 'state' | 'forced_down' | 'disabled_reason'>> = {},
  ): NovaService {
    const service: NovaService = {
      id: randomUUID(),
      binary: 'nova-compute',
      host,
      zone: 'nova',
      status: o.status ?? 'enabled',
      state: o.state ?? 'up',
      disabled_reason: o.disabled_reason ?? null,
      forced_down: o.forced_down ?? false,
    };
    this.services.set(service.id, service);
    return service;
  }

  service(host: string): NovaService {
    const s = [...this.services.values()].find((x) => x.host === host);
    if (!s) throw new Error(`fake nova: no service on ${host}`);
    return s;
  }

  addServer(s: Partial<FakeServer> & { host: string }): FakeServer {
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
    };
    this.servers.set(server.id, server);
    return server;
  }

  evacuationsOf(id: string): number {
    return this.evacuations.filter((e) => e.id === id).length;
  }

  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  // ------------------------------------------------------------------ NovaClient

  async listServices(q: { host?: string; binary?: string }, _o?: CallOptions): Promise<NovaService[]> {
    this.enter('listServices', [q.host]);
    return [...this.services.values()]
      .filter((s) => (!q.host || s.host === q.host) && (!q.binary || s.binary === q.binary))
      .map((s) => ({ ...s }));
  }

  async updateService(
    id: string,
    body: { status?: 'enabled' | 'disabled'; disabled_reason?: string; forced_down?: boolean },
    _o?: CallOptions,
  ): Promise<NovaService> {
    this.enter('updateService', [id, body]);
    const s = this.services.get(id);
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
    return [...this.servers.values()].filter((s) => s.host === host).map((s) => this.view(s));
  }

  async getServer(id: string, _o?: CallOptions): Promise<NovaServer> {
    this.enter('getServer', [id]);
    return this.view(this.must(id));
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
    const candidates = [...this.services.values()].filter(
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
      created_at: new Date().toISOString().replace('Z', '000'),
      updated_at: null,
    };
    this.migrations.push(migration);
    s.taskState = 'rebuilding';
    this.later(this.evacuateMs, () => {
      s.taskState = null;
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
    if (!['active', 'error'].includes(s.vmState)) {
      throw new NovaConflict(409, `Cannot 'stop' instance ${id} while it is in vm_state ${s.vmState}`);
    }
    s.taskState = 'powering-off';
    this.later(this.stopMs, () => {
      s.taskState = null;
      s.vmState = 'stopped';
      s.powerState = 4;
    });
  }

  async startServer(id: string, _o?: CallOptions): Promise<void> {
    this.enter('startServer', [id]);
    const s = this.must(id);
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
    this.enter('listMigrations', [q.instanceUuid]);
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

  private enter(method: string, args: unknown[]): void {
    this.calls.push(`${method} ${typeof args[0] === 'string' ? args[0] : JSON.stringify(args[0] ?? '')}`);
    const err = this.fault?.(method, args);
    if (err) throw err;
  }

  private must(id: string): FakeServer {
    const s = this.servers.get(id);
    if (!s) throw new NovaNotFound(404, `Instance ${id} could not be found.`);
    return s;
  }

  private view(s: FakeServer): NovaServer {
    return {
      id: s.id,
      name: s.name,
      status: s.vmState.toUpperCase(),
      metadata: { ...s.metadata },
      locked: s.locked,
      'OS-EXT-STS:vm_state': s.vmState,
      'OS-EXT-STS:task_state': s.taskState,
      'OS-EXT-STS:power_state': s.powerState,
      'OS-EXT-SRV-ATTR:host': s.host,
      'OS-EXT-SRV-ATTR:hypervisor_hostname': s.node ?? `${s.host}.nodes.example`,
    };
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
