// CONTRACT (implemented by the OpenStack helper in src/openstack/*.ts).
// What the facade and the engine need from Nova. Every method has a timeout
// and bounded retries: GET and PUT on 5xx, timeouts and connection errors;
// every call, POST actions included, when it provably never reached Nova;
// lock, unlock, os-resetState and add_host also on any 5xx, timeouts and
// dropped connections. os-stop, os-start and evacuate are otherwise sent once
// (nova-protocol.ts ACTION_RETRY says why).
//
// Errors: NovaError with .status (HTTP status; 0 for timeout/connection) and
// .message (Nova's text). Subclasses map Masakari's translations:
// 400 → NovaBadRequest, 403 → NovaForbidden, 404 → NovaNotFound, 409 → NovaConflict.

export interface NovaService {
  id: string; // uuid (microversion >= 2.53)
  binary: string;
  host: string;
  zone?: string;
  status: 'enabled' | 'disabled';
  state: 'up' | 'down';
  disabled_reason: string | null;
  forced_down: boolean;
  updated_at?: string | null;
}

export interface NovaServer {
  id: string;
  name: string;
  status: string;
  metadata: Record<string, string>;
  locked?: boolean;
  'OS-EXT-STS:vm_state': string;
  'OS-EXT-STS:task_state': string | null;
  'OS-EXT-STS:power_state': number;
  'OS-EXT-SRV-ATTR:host': string | null;
  'OS-EXT-SRV-ATTR:hypervisor_hostname': string | null;
  /** The flavor embedded in the server (microversion >= 2.47), extra_specs included for an admin. */
  flavor?: NovaServerFlavor;
  /** The image booted from; Nova shows "" for a server booted from a volume. */
  image?: { id: string } | '';
}

export interface NovaServerFlavor {
  original_name?: string;
  extra_specs?: Record<string, string>;
}

/** A Glance v2 image: its user properties are top-level string fields beside the core ones. */
export interface GlanceImage {
  id: string;
  [property: string]: unknown;
}

export interface NovaAggregate {
  id: number;
  name: string;
  hosts: string[];
  availability_zone?: string | null;
  metadata?: Record<string, string>;
}

export interface NovaMigration {
  id: number;
  uuid?: string;
  instance_uuid: string;
  migration_type: string; // 'evacuation' | 'migration' | 'live-migration' | 'resize'
  source_compute: string | null;
  dest_compute: string | null;
  status: string;
  created_at: string;
  updated_at: string | null;
}

export interface CallOptions {
  /** X-OpenStack-Request-ID to propagate. */
  requestId?: string;
  signal?: AbortSignal;
  /**
   * Called synchronously right before every HTTP attempt of a request that
   * changes something (any method but GET and HEAD), retries included; what
   * it throws ends the request unsent (the Lease fence, src/runtime/lease-fence.ts).
   */
  beforeSend?: () => void;
}

export interface NovaClient {
  listServices(q: { host?: string; binary?: string }, o?: CallOptions): Promise<NovaService[]>;
  /** PUT /os-services/{id}: status and/or forced_down (2.53+). */
  updateService(
    id: string,
    body: { status?: 'enabled' | 'disabled'; disabled_reason?: string; forced_down?: boolean },
    o?: CallOptions,
  ): Promise<NovaService>;
  /** GET /servers/detail?all_tenants=True&host=..., following every page. */
  listServersOnHost(host: string, o?: CallOptions): Promise<NovaServer[]>;
  getServer(id: string, o?: CallOptions): Promise<NovaServer>;
  resetState(id: string, state: 'error' | 'active', o?: CallOptions): Promise<void>;
  evacuate(id: string, targetHost: string | undefined, o?: CallOptions): Promise<void>;
  stopServer(id: string, o?: CallOptions): Promise<void>;
  startServer(id: string, o?: CallOptions): Promise<void>;
  lockServer(id: string, o?: CallOptions): Promise<void>;
  unlockServer(id: string, o?: CallOptions): Promise<void>;
  /** GET /os-aggregates, metadata included. */
  listAggregates(o?: CallOptions): Promise<NovaAggregate[]>;
  /** GET /v2/images/{id} from the catalog's `image` service (Glance); 404 → NovaNotFound. */
  getImage(id: string, o?: CallOptions): Promise<GlanceImage>;
  addHostToAggregate(aggregateId: number, host: string, o?: CallOptions): Promise<void>;
  /** GET /os-migrations?instance_uuid=...&migration_type=evacuation */
  listMigrations(
    q: { instanceUuid?: string; migrationType?: string; sourceCompute?: string },
    o?: CallOptions,
  ): Promise<NovaMigration[]>;
}

export class NovaError extends Error {
  constructor(
    public readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'NovaError';
  }
}
export class NovaBadRequest extends NovaError {}
export class NovaForbidden extends NovaError {}
export class NovaNotFound extends NovaError {}
export class NovaConflict extends NovaError {}
