// The configuration files of the mini cloud, rendered from its ports and work
// dir. Every service is on 127.0.0.1, SQLite, one worker; timers are shortened
// so a killed nova-compute is seen down within seconds (Nova's defaults are
// report_interval 10 s and service_down_time 60 s).
import { join } from 'node:path';
import { repoRoot } from '../controlplane/paths.ts';

/**
 * The PYTHONPATH entry whose sitecustomize makes oslo.db begin SQLite
 * transactions IMMEDIATE (see the file for why). Every Python process of the
 * mini cloud and of the reference Masakari (test/e2e) runs with it.
 */
export function sqliteImmediatePythonPath(): string {
  return join(repoRoot(), 'hack/openstack/sqlite-immediate');
}

export interface CloudPorts {
  rabbit: number;
  rabbitDist: number;
  epmd: number;
  keystone: number;
  placement: number;
  /** nova-api itself (gunicorn); clients reach it through the recording proxy. */
  novaApi: number;
  /** The recording proxy in front of nova-api: the catalog's compute endpoint. */
  nova: number;
  glance: number;
  neutron: number;
}

/** Loopback only, so fixed passwords are fine; every service user shares one. */
export const SERVICE_PASSWORD = 'service-secret';
export const ADMIN_PASSWORD = 'admin-secret';
export const MEMBER_PASSWORD = 'member-secret';

/** Nova's [DEFAULT] report_interval and service_down_time, in seconds. */
export const REPORT_INTERVAL_S = 2;
export const SERVICE_DOWN_TIME_S = 8;

const ini = (sections: Record<string, Record<string, string | number | boolean>>): string =>
  Object.entries(sections)
    .map(
      ([name, kv]) =>
        `[${name}]\n${Object.entries(kv)
          .map(([k, v]) => `${k} = ${v}`)
          .join('\n')}\n`,
    )
    .join('\n');

const sqlite = (path: string): string => `sqlite:///${path}?timeout=30`;

export const rabbitUrl = (p: CloudPorts): string => `rabbit://guest:guest@127.0.0.1:${p.rabbit}/`;
export const keystoneUrl = (p: CloudPorts): string => `http://127.0.0.1:${p.keystone}`;

function serviceAuth(p: CloudPorts, username: string): Record<string, string> {
  return {
    auth_type: 'password',
    auth_url: `${keystoneUrl(p)}/v3`,
    username,
    password: SERVICE_PASSWORD,
    project_name: 'service',
    user_domain_name: 'Default',
    project_domain_name: 'Default',
  };
}

export function keystoneConf(dir: string): string {
  return ini({
    DEFAULT: { debug: false },
    database: { connection: sqlite(`${dir}/db/keystone.sqlite`) },
    token: { provider: 'fernet' },
    fernet_tokens: { key_repository: `${dir}/etc/keystone/fernet-keys` },
    fernet_receipts: { key_repository: `${dir}/etc/keystone/fernet-keys` },
    credential: { key_repository: `${dir}/etc/keystone/credential-keys` },
    oslo_messaging_notifications: { driver: 'noop' },
    // bcrypt's default 12 rounds costs ~0.3 s per password check on a busy core
    identity: { password_hash_rounds: 4 },
  });
}

export function placementConf(dir: string, p: CloudPorts): string {
  return ini({
    DEFAULT: { debug: false },
    placement_database: { connection: sqlite(`${dir}/db/placement.sqlite`) },
    api: { auth_strategy: 'keystone' },
    keystone_authtoken: { www_authenticate_uri: keystoneUrl(p), ...serviceAuth(p, 'placement') },
  });
}

export function novaConf(dir: string, p: CloudPorts): string {
  return ini({
    DEFAULT: {
      debug: false,
      transport_url: rabbitUrl(p),
      my_ip: '127.0.0.1',
      state_path: `${dir}/state/control`,
      compute_driver: 'fake.FakeDriverWithoutFakeNodes',
      report_interval: REPORT_INTERVAL_S,
      service_down_time: SERVICE_DOWN_TIME_S,
      periodic_fuzzy_delay: 0,
    },
    api_database: { connection: sqlite(`${dir}/db/nova_api.sqlite`) },
    database: { connection: sqlite(`${dir}/db/nova_cell1.sqlite`) },
    api: { max_limit: 1000 },
    wsgi: { api_paste_config: `${dir}/etc/nova/api-paste.ini` },
    conductor: { workers: 1 },
    scheduler: { workers: 1, discover_hosts_in_cells_interval: 2 },
    filter_scheduler: { host_subset_size: 1 },
    quota: { driver: 'nova.quota.NoopQuotaDriver' },
    oslo_concurrency: { lock_path: `${dir}/lock` },
    oslo_messaging_notifications: { driver: 'noop' },
    keystone_authtoken: { www_authenticate_uri: keystoneUrl(p), ...serviceAuth(p, 'nova') },
    service_user: { send_service_user_token: false },
    placement: { ...serviceAuth(p, 'placement'), region_name: 'RegionOne', valid_interfaces: 'public' },
    neutron: {
      ...serviceAuth(p, 'nova'),
      region_name: 'RegionOne',
      endpoint_override: `http://127.0.0.1:${p.neutron}`,
    },
    glance: { api_servers: `http://127.0.0.1:${p.glance}` },
    cinder: { os_region_name: 'RegionOne' },
    compute: { resource_provider_association_refresh: 0 },
    vnc: { enabled: false },
    os_vif_ovs: { ovsdb_connection: 'unix:/nonexistent' },
  });
}

/** Per-compute overlay: its host name and its own state path (compute_id lives there). */
export function computeConf(dir: string, host: string): string {
  return ini({
    DEFAULT: { host, state_path: `${dir}/state/${host}` },
  });
}
