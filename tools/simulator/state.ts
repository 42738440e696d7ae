// In-memory world of the simulator: Keystone users and tokens, Nova compute
// services, servers, aggregates and migrations, plus the test knobs (faults,
// latencies, counters). HTTP handlers (keystone.ts, nova.ts, control.ts) only
// translate requests into calls on this class, so in-process tests can drive
// the same state directly through `sim.state`.

import { randomBytes, randomUUID } from 'node:crypto';
import type {
  SimAggregate,
  SimImage,
  SimAppCredential,
  SimFault,
  SimLatencies,
  SimMigration,
  SimProject,
  SimRequestLogEntry,
  SimServer,
  SimServerInput,
  SimService,
  SimStateOptions,
  SimToken,
  SimUser,
} from './records.ts';
import { powerStateFor } from './server-states.ts';
import { SimHolds } from './holds.ts';

const REQUEST_LOG_LIMIT = 2000;

export class SimError extends Error {
  constructor(
    public readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'SimError';
  }
}

export function nowIso(): string {
  // Nova prints times without a zone suffix in most places; Keystone uses Z.
  return new Date().toISOString().replace(/\.\d{3}Z$/, '.000000');
}

export class SimState {
  readonly users = new Map<string, SimUser>();
  readonly projects = new Map<string, SimProject>();
  readonly appCredentials = new Map<string, SimAppCredential>();
  readonly tokens = new Map<string, SimToken>();
  readonly services = new Map<string, SimService>(); // by uuid
  readonly servers = new Map<string, SimServer>();
  readonly aggregates = new Map<number, SimAggregate>();
  /** Glance's images by id (served under /image). */
  readonly images = new Map<string, SimImage>();
  readonly migrations: SimMigration[] = [];
  faults: SimFault[] = [];
  /** Requests held on their way in until the test releases them (holds.ts). */
  readonly holds = new SimHolds();
  latencies: SimLatencies = { evacuate: 0, stop: 0, start: 0, api: 0 };
  /** Accepted server actions per action name and server id (evacuate, os-stop, ...). */
  actionCounts: Record<string, Record<string, number>> = {};
  /** Every call that reached a Nova action handler, accepted or refused. */
  actionCalls: Record<string, Record<string, number>> = {};
  requestLog: SimRequestLogEntry[] = [];
  tokenTtlMs = 3_600_000;
  /**
   * How often a running nova-compute reports (Nova's report_interval, 10 s by default; shorter here so
   * tests need not wait): each report writes its service row, so updated_at moves while it runs, even
   * forced down (nova/servicegroup/drivers/db.py _report_state).
   */
  serviceReportMs = 1_000;
  maxLimit = 1000;
  masakariUrl = 'http://127.0.0.1:15868/v1';
  private nextServiceId = 1;
  private nextMigrationId = 1;
  private nextAggregateId = 1;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly initial: SimStateOptions = {}) {
    this.reset();
  }

  /** Back to the options given at start: every host up, no faults, no tokens. */
  reset(): void {
    this.clearTimers();
    for (const m of [this.users, this.projects, this.appCredentials, this.tokens, this.services, this.servers]) {
      m.clear();
    }
    this.aggregates.clear();
    this.images.clear();
    this.migrations.length = 0;
    this.faults = [];
    this.holds.clear();
    this.actionCounts = {};
    this.actionCalls = {};
    this.requestLog = [];
    this.nextServiceId = this.nextMigrationId = this.nextAggregateId = 1;
    const o = this.initial;
    this.latencies = { evacuate: 0, stop: 0, start: 0, api: 0, ...o.latencyMs };
    this.tokenTtlMs = o.tokenTtlMs ?? 3_600_000;
    this.maxLimit = o.maxLimit ?? 1000;
    this.masakariUrl = o.masakariUrl ?? 'http://127.0.0.1:15868/v1';

    this.projects.set('admin', { id: 'admin', name: 'admin' });
    this.projects.set('demo', { id: 'demo', name: 'demo' });
    this.projects.set('service', { id: 'service', name: 'service' });
    this.users.set('admin', {
      id: 'admin',
      name: 'admin',
      password: o.adminPassword ?? 'admin-secret',
      roles: { admin: ['admin', 'member', 'reader'], demo: ['admin', 'member', 'reader'] },
      systemRoles: ['admin', 'member', 'reader'],
    });
    this.users.set('member', {
      id: 'member',
      name: 'member',
      password: o.memberPassword ?? 'member-secret',
      roles: { demo: ['member', 'reader'] },
      systemRoles: [],
    });
    this.appCredentials.set('admin-app-cred', {
      id: 'admin-app-cred',
      name: 'admin-app-cred',
      secret: 'admin-app-secret',
      userId: 'admin',
      projectId: 'admin',
      roles: ['admin', 'member', 'reader'],
    });
    for (const h of o.hosts ?? []) this.addHost(h);
    for (const s of o.servers ?? []) this.addServer(s);
  }

  // ---- timers -------------------------------------------------------------

  schedule(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  clearTimers(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  // ---- Keystone -----------------------------------------------------------

  userByName(name: string): SimUser | undefined {
    return [...this.users.values()].find((u) => u.name === name);
  }

  projectByName(name: string): SimProject | undefined {
    return [...this.projects.values()].find((p) => p.name === name);
  }

  issueToken(t: Omit<SimToken, 'id' | 'issuedAt' | 'expiresAt'>): SimToken {
    const issuedAt = new Date();
    const token: SimToken = {
      ...t,
      id: 'gAAAA' + randomBytes(24).toString('base64url'),
      issuedAt,
      expiresAt: new Date(issuedAt.getTime() + this.tokenTtlMs),
    };
    this.tokens.set(token.id, token);
    return token;
  }

  /** The token if it exists and has not expired. */
  liveToken(id: string | undefined): SimToken | undefined {
    if (!id) return undefined;
    const t = this.tokens.get(id);
    if (!t) return undefined;
    if (t.expiresAt.getTime() <= Date.now()) {
      this.tokens.delete(id);
      return undefined;
    }
    return t;
  }

  revokeTokens(): number {
    const n = this.tokens.size;
    this.tokens.clear();
    return n;
  }

  // ---- compute hosts ------------------------------------------------------

  addHost(name: string, zone = 'nova'): SimService {
    if (!name) throw new SimError(400, 'host name is required');
    if (this.serviceOf(name)) throw new SimError(409, `host ${name} already exists`);
    const svc: SimService = {
      uuid: randomUUID(),
      id: this.nextServiceId++,
      binary: 'nova-compute',
      host: name,
      zone,
      disabled: false,
      disabledReason: null,
      forcedDown: false,
      alive: true,
      updatedAt: nowIso(),
    };
    this.services.set(svc.uuid, svc);
    return svc;
  }

  removeHost(name: string): void {
    const svc = this.mustService(name);
    this.services.delete(svc.uuid);
  }

  /** The nova-compute service of a host: exact, case-sensitive match as in Nova's API filter. */
  serviceOf(host: string): SimService | undefined {
    return [...this.services.values()].find((s) => s.binary === 'nova-compute' && s.host === host);
  }

  mustService(host: string): SimService {
    const svc = this.serviceOf(host);
    if (!svc) throw new SimError(404, `host ${host} not found`);
    return svc;
  }

  /** The service row's updated_at: the last write to it, or the last report of a running nova-compute. */
  serviceUpdatedAt(svc: SimService, now = Date.now()): string {
    if (!svc.alive) return svc.updatedAt;
    const report = new Date(Math.floor(now / this.serviceReportMs) * this.serviceReportMs)
      .toISOString()
      .replace(/\.\d{3}Z$/, '.000000');
    return report > svc.updatedAt ? report : svc.updatedAt;
  }

  isUp(svc: SimService): boolean {
    return svc.alive && !svc.forcedDown;
  }

  /** The compute process dies: its service reports down; forcedDown additionally marks it forced down. */
  failHost(name: string, opts: { forcedDown?: boolean } = {}): SimService {
    const svc = this.mustService(name);
    svc.alive = false;
    if (opts.forcedDown !== undefined) svc.forcedDown = opts.forcedDown;
    svc.updatedAt = nowIso();
    return svc;
  }

  /** The compute process is back (forced_down and disabled are left to the operator, as in Nova). */
  recoverHost(name: string, opts: { forcedDown?: boolean; enable?: boolean } = {}): SimService {
    const svc = this.mustService(name);
    svc.alive = true;
    if (opts.forcedDown !== undefined) svc.forcedDown = opts.forcedDown;
    if (opts.enable) {
      svc.disabled = false;
      svc.disabledReason = null;
    }
    svc.updatedAt = nowIso();
    return svc;
  }

  // ---- servers ------------------------------------------------------------

  addServer(input: SimServerInput): SimServer {
    this.mustService(input.host);
    const id = input.id ?? randomUUID();
    if (this.servers.has(id)) throw new SimError(409, `server ${id} already exists`);
    const vmState = input.vm_state ?? 'active';
    const now = nowIso();
    const server: SimServer = {
      id,
      name: input.name,
      projectId: input.project_id ?? 'demo',
      userId: 'member',
      metadata: { ...input.metadata },
      locked: input.locked ?? false,
      lockedBy: input.locked ? 'admin' : null,
      vmState,
      taskState: input.task_state ?? null,
      powerState: powerStateFor(vmState),
      host: input.host,
      node: input.host,
      imageId: input.image_id ?? null,
      flavorExtraSpecs: { ...input.flavor_extra_specs },
      createdAt: now,
      updatedAt: now,
    };
    this.servers.set(id, server);
    return server;
  }

  removeServer(id: string): void {
    if (!this.servers.delete(id)) throw new SimError(404, `server ${id} not found`);
  }

  touch(server: SimServer): void {
    server.updatedAt = nowIso();
  }

  count(table: 'actionCounts' | 'actionCalls', action: string, serverId: string): void {
    const byServer = (this[table][action] ??= {});
    byServer[serverId] = (byServer[serverId] ?? 0) + 1;
  }

  /** Where the scheduler would put an evacuated server: an enabled, up host other than the source, least loaded first. */
  pickTarget(source: string | null, requested?: string): SimService | undefined {
    const ok = (s: SimService) => s.binary === 'nova-compute' && s.host !== source && !s.disabled && this.isUp(s);
    if (requested) {
      const svc = this.serviceOf(requested);
      return svc && ok(svc) ? svc : undefined;
    }
    const load = (h: string) => [...this.servers.values()].filter((s) => s.host === h).length;
    return [...this.services.values()]
      .filter(ok)
      .sort((a, b) => load(a.host) - load(b.host) || a.host.localeCompare(b.host))[0];
  }

  // ---- images ---------------------------------------------------------------

  addImage(input: { id?: string; name: string; properties?: Record<string, string> }): SimImage {
    const id = input.id ?? randomUUID();
    if (this.images.has(id)) throw new SimError(409, `image ${id} already exists`);
    const image: SimImage = { id, name: input.name, properties: { ...input.properties } };
    this.images.set(id, image);
    return image;
  }

  // ---- aggregates and migrations -----------------------------------------

  addAggregate(input: {
    name: string;
    hosts?: string[];
    availability_zone?: string | null;
    metadata?: Record<string, string>;
  }): SimAggregate {
    if (!input.name) throw new SimError(400, 'aggregate name is required');
    const agg: SimAggregate = {
      id: this.nextAggregateId++,
      uuid: randomUUID(),
      name: input.name,
      availabilityZone: input.availability_zone ?? null,
      hosts: [...(input.hosts ?? [])],
      metadata: {
        ...input.metadata,
        ...(input.availability_zone ? { availability_zone: input.availability_zone } : {}),
      },
      createdAt: nowIso(),
      updatedAt: null,
    };
    this.aggregates.set(agg.id, agg);
    return agg;
  }

  addMigration(
    m: Pick<SimMigration, 'instanceUuid' | 'migrationType' | 'sourceCompute' | 'destCompute'>,
  ): SimMigration {
    const row: SimMigration = {
      ...m,
      id: this.nextMigrationId++,
      uuid: randomUUID(),
      sourceNode: m.sourceCompute,
      destNode: m.destCompute,
      status: 'accepted',
      createdAt: nowIso(),
      updatedAt: null,
    };
    this.migrations.push(row);
    return row;
  }

  // ---- faults and request log ---------------------------------------------

  /** Consumes one matching fault, if any. */
  takeFault(method: string, path: string, when: 'before' | 'after', action?: string): SimFault | undefined {
    const f = this.faults.find(
      (x) =>
        x.count > 0 &&
        (x.when ?? 'before') === when &&
        (!x.method || x.method.toUpperCase() === method) &&
        (!x.action || x.action === action) &&
        path.startsWith(x.path),
    );
    if (!f) return undefined;
    f.count--;
    this.faults = this.faults.filter((x) => x.count > 0);
    return f;
  }

  logRequest(e: SimRequestLogEntry): void {
    this.requestLog.push(e);
    if (this.requestLog.length > REQUEST_LOG_LIMIT)
      this.requestLog.splice(0, this.requestLog.length - REQUEST_LOG_LIMIT);
  }
}
