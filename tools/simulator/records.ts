// The simulator's records: Keystone users, projects, application
// credentials and tokens, Nova services, servers, aggregates and
// migrations, and the test knobs (faults, latencies, the request log).

export interface SimLatencies {
  /** Time an accepted evacuation spends in task_state 'rebuilding' before it moves. */
  evacuate: number;
  /** Time from os-stop to vm_state 'stopped'. */
  stop: number;
  /** Time from os-start to vm_state 'active'. */
  start: number;
  /** Added before every Keystone and Nova response. */
  api: number;
}

export interface SimServerInput {
  id?: string;
  name: string;
  host: string;
  metadata?: Record<string, string>;
  vm_state?: string;
  task_state?: string | null;
  project_id?: string;
  locked?: boolean;
  /** Glance image id the server booted from; unset: booted from a volume (Nova shows image ""). */
  image_id?: string;
  /** extra_specs of the server's embedded flavor (2.47+). */
  flavor_extra_specs?: Record<string, string>;
}

export interface SimUser {
  id: string;
  name: string;
  password: string;
  /** Role names per project id. */
  roles: Record<string, string[]>;
  /** Role names on the system scope 'all'. */
  systemRoles: string[];
}

export interface SimProject {
  id: string;
  name: string;
}

export interface SimAppCredential {
  id: string;
  name: string;
  secret: string;
  userId: string;
  projectId: string;
  roles: string[];
}

export interface SimToken {
  id: string;
  userId: string;
  projectId: string | null;
  system: boolean;
  roles: string[];
  methods: string[];
  issuedAt: Date;
  expiresAt: Date;
  appCredentialId?: string;
}

export interface SimService {
  uuid: string;
  id: number;
  binary: string;
  host: string;
  zone: string;
  disabled: boolean;
  disabledReason: string | null;
  forcedDown: boolean;
  /** The compute process is running and heartbeating (what "fail a host" turns off). */
  alive: boolean;
  updatedAt: string;
}

export interface SimServer {
  id: string;
  name: string;
  projectId: string;
  userId: string;
  metadata: Record<string, string>;
  locked: boolean;
  lockedBy: 'admin' | 'owner' | null;
  vmState: string;
  taskState: string | null;
  powerState: number;
  host: string | null;
  node: string | null;
  imageId: string | null;
  flavorExtraSpecs: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}

/** A Glance image: core fields and the user properties Glance shows beside them. */
export interface SimImage {
  id: string;
  name: string;
  properties: Record<string, string>;
}

export interface SimAggregate {
  id: number;
  uuid: string;
  name: string;
  availabilityZone: string | null;
  hosts: string[];
  metadata: Record<string, string>;
  createdAt: string;
  updatedAt: string | null;
}

export interface SimMigration {
  id: number;
  uuid: string;
  instanceUuid: string;
  migrationType: string;
  sourceCompute: string | null;
  sourceNode: string | null;
  destCompute: string | null;
  destNode: string | null;
  status: string;
  createdAt: string;
  updatedAt: string | null;
}

/**
 * Makes the next `count` requests matching method + path prefix fail.
 * kind: 500/503 answer with a Nova/Keystone fault; 'hang' never answers;
 * 'reset' drops the connection. when='after' lets the request take effect
 * first and then loses the answer (the lost-response case for exactly-once).
 */
export interface SimFault {
  method?: string;
  path: string;
  /** Only a server action of this name (the body's key, e.g. 'unlock'). */
  action?: string;
  count: number;
  kind: 500 | 503 | 'hang' | 'reset';
  when?: 'before' | 'after';
}

export interface SimRequestLogEntry {
  at: string;
  method: string;
  path: string;
  requestId: string | null;
  microversion: string | null;
  status: number;
}

export interface SimStateOptions {
  hosts?: string[];
  servers?: SimServerInput[];
  latencyMs?: Partial<SimLatencies>;
  adminPassword?: string;
  memberPassword?: string;
  /** Lifetime of issued tokens. */
  tokenTtlMs?: number;
  /** Nova [api] max_limit: page size cap of list calls. */
  maxLimit?: number;
  masakariUrl?: string;
}
