// An in-memory NovaClient for unit tests: servers and services as plain
// objects, every call logged, and per-method scripted failures. Behaviour
// hooks let a test decide how a server reacts to os-stop / os-start.

import { NovaConflict, NovaError, NovaNotFound } from '../../openstack/types.ts';
import type { NovaClient, NovaMigration, NovaServer, NovaService, NovaAggregate } from '../../openstack/types.ts';

export type NovaMethod = keyof NovaClient;

export function makeServer(id: string, over: Partial<NovaServer> = {}): NovaServer {
  return {
    id,
    name: `vm-${id.slice(0, 8)}`,
    status: 'ACTIVE',
    metadata: { HA_Enabled: 'True' },
    locked: false,
    'OS-EXT-STS:vm_state': 'active',
    'OS-EXT-STS:task_state': null,
    'OS-EXT-STS:power_state': 1,
    'OS-EXT-SRV-ATTR:host': 'compute-1',
    'OS-EXT-SRV-ATTR:hypervisor_hostname': 'compute-1',
    ...over,
  };
}

export class FakeNova implements NovaClient {
  readonly servers = new Map<string, NovaServer>();
  readonly services: NovaService[] = [];
  readonly calls: Array<{ method: NovaMethod; args: unknown[] }> = [];
  private readonly failures = new Map<NovaMethod, Error[]>();
  /** What os-stop does to a server (default: stopped at once). */
  onStop: (s: NovaServer) => void = (s) => {
    s['OS-EXT-STS:vm_state'] = 'stopped';
  };
  /** What os-start does (default: active at once). */
  onStart: (s: NovaServer) => void = (s) => {
    s['OS-EXT-STS:vm_state'] = 'active';
  };
  /** Called on every listServices, e.g. to make Nova ignore a disable. */
  onListServices: () => void = () => {};
  /** Called on every getServer, e.g. to make a state change appear after N polls. */
  onGet: (s: NovaServer) => void = () => {};

  addServer(s: NovaServer): NovaServer {
    this.servers.set(s.id, s);
    return s;
  }

  addService(host: string, binary = 'nova-compute', over: Partial<NovaService> = {}): NovaService {
    const svc: NovaService = {
      id: `svc-${host}-${binary}`,
      binary,
      host,
      status: 'enabled',
      state: 'up',
      disabled_reason: null,
      forced_down: false,
      ...over,
    };
    this.services.push(svc);
    return svc;
  }

  /** The next call(s) of `method` throw these errors, in order. */
  failNext(method: NovaMethod, ...errors: Error[]): void {
    this.failures.set(method, [...(this.failures.get(method) ?? []), ...errors]);
  }

  count(method: NovaMethod): number {
    return this.calls.filter((c) => c.method === method).length;
  }

  private enter(method: NovaMethod, args: unknown[]): void {
    this.calls.push({ method, args });
    const queue = this.failures.get(method);
    const err = queue?.shift();
    if (err) throw err;
  }

  private server(id: string): NovaServer {
    const s = this.servers.get(id);
    if (!s) throw new NovaNotFound(404, `Instance ${id} could not be found.`);
    return s;
  }

  async listServices(q: { host?: string; binary?: string }): Promise<NovaService[]> {
    this.enter('listServices', [q]);
    this.onListServices();
    return this.services
      .filter((s) => (q.host === undefined || s.host === q.host) && (q.binary === undefined || s.binary === q.binary))
      .map((s) => ({ ...s }));
  }

  async updateService(
    id: string,
    body: { status?: 'enabled' | 'disabled'; disabled_reason?: string; forced_down?: boolean },
  ): Promise<NovaService> {
    this.enter('updateService', [id, body]);
    const svc = this.services.find((s) => s.id === id);
    if (!svc) throw new NovaNotFound(404, `Service ${id} not found.`);
    if (body.status) svc.status = body.status;
    if (body.disabled_reason !== undefined) svc.disabled_reason = body.disabled_reason;
    if (body.forced_down !== undefined) svc.forced_down = body.forced_down;
    return { ...svc };
  }

  async listServersOnHost(host: string): Promise<NovaServer[]> {
    this.enter('listServersOnHost', [host]);
    return [...this.servers.values()].filter((s) => s['OS-EXT-SRV-ATTR:host'] === host).map((s) => structuredClone(s));
  }

  async getServer(id: string): Promise<NovaServer> {
    this.enter('getServer', [id]);
    const s = this.server(id);
    this.onGet(s);
    return structuredClone(s);
  }

  async resetState(id: string, state: 'error' | 'active'): Promise<void> {
    this.enter('resetState', [id, state]);
    this.server(id)['OS-EXT-STS:vm_state'] = state;
  }

  async evacuate(id: string, targetHost: string | undefined): Promise<void> {
    this.enter('evacuate', [id, targetHost]);
    this.server(id);
  }

  async stopServer(id: string): Promise<void> {
    this.enter('stopServer', [id]);
    this.onStop(this.server(id));
  }

  async startServer(id: string): Promise<void> {
    this.enter('startServer', [id]);
    const s = this.server(id);
    if (s['OS-EXT-STS:vm_state'] !== 'stopped')
      throw new NovaConflict(409, `Cannot 'start' instance ${id} while it is in vm_state ${s['OS-EXT-STS:vm_state']}`);
    this.onStart(s);
  }

  async lockServer(id: string): Promise<void> {
    this.enter('lockServer', [id]);
    this.server(id).locked = true;
  }

  async unlockServer(id: string): Promise<void> {
    this.enter('unlockServer', [id]);
    this.server(id).locked = false;
  }

  async listAggregates(): Promise<NovaAggregate[]> {
    this.enter('listAggregates', []);
    return [];
  }

  async addHostToAggregate(aggregateId: number, host: string): Promise<void> {
    this.enter('addHostToAggregate', [aggregateId, host]);
  }

  async listMigrations(q: {
    instanceUuid?: string;
    migrationType?: string;
    sourceCompute?: string;
  }): Promise<NovaMigration[]> {
    this.enter('listMigrations', [q]);
    return [];
  }
}

export const nova500 = (): NovaError => new NovaError(500, 'Unexpected API Error.');
