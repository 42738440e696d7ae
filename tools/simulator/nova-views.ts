// The Nova API's documents for services, servers, migrations and
// aggregates at the caller's microversion (nova/api/openstack/compute/views/
// and the *.py controllers' _format helpers).

import { createHash } from 'node:crypto';
import type { SimRequest } from './router.ts';
import type { SimState } from './state.ts';
import type { SimAggregate, SimMigration, SimServer, SimService } from './records.ts';
import { serverStatus } from './server-states.ts';
import type { NovaCtx, Version } from './nova-wsgi.ts';
import { atLeast } from './nova-wsgi.ts';

export function serviceView(state: SimState, s: SimService, v: Version): Record<string, unknown> {
  return {
    id: atLeast(v, 53) ? s.uuid : s.id,
    binary: s.binary,
    host: s.host,
    zone: s.zone,
    status: s.disabled ? 'disabled' : 'enabled',
    state: state.isUp(s) ? 'up' : 'down',
    updated_at: state.serviceUpdatedAt(s),
    disabled_reason: s.disabledReason,
    forced_down: s.forcedDown,
  };
}

/** Statuses whose servers carry "progress" (nova/api/openstack/compute/views/servers.py _progress_statuses). */
const PROGRESS_STATUSES = new Set(['ACTIVE', 'BUILD', 'REBUILD', 'RESIZE', 'VERIFY_RESIZE', 'MIGRATING']);

/** Nova's hostname for a server: its display name, lowercased, other characters as '-' (nova/utils.py sanitize_hostname). */
function sanitizedHostname(name: string): string {
  return name
    .toLowerCase()
    .replace(/[ _]/g, '-')
    .replace(/[^\w.-]+/g, '')
    .replace(/^[.-]+|[.-]+$/g, '')
    .slice(0, 63);
}

/** host_status (2.16+): nova/compute/api.py get_instance_host_status. */
function hostStatus(state: SimState, s: SimServer): string {
  if (!s.host) return '';
  const svc = state.serviceOf(s.host);
  if (!svc) return '';
  if (svc.forcedDown) return 'DOWN';
  if (svc.disabled) return 'MAINTENANCE';
  return state.isUp(svc) ? 'UP' : 'UNKNOWN';
}

export function serverView(req: SimRequest, s: SimServer, ctx: NovaCtx, state: SimState): Record<string, unknown> {
  const link = `${req.origin}/compute/v2.1/servers/${s.id}`;
  const view: Record<string, unknown> = {
    id: s.id,
    name: s.name,
    status: serverStatus(s.vmState, s.taskState),
    tenant_id: s.projectId,
    user_id: s.userId,
    metadata: s.metadata,
    hostId: s.host
      ? createHash('sha224')
          .update(s.projectId + s.host)
          .digest('hex')
      : '',
    image: s.imageId
      ? { id: s.imageId, links: [{ rel: 'bookmark', href: `${req.origin}/compute/images/${s.imageId}` }] }
      : '',
    flavor: {
      vcpus: 1,
      ram: 512,
      disk: 1,
      ephemeral: 0,
      swap: 0,
      original_name: 'm1.tiny',
      extra_specs: { ...s.flavorExtraSpecs },
    },
    created: s.createdAt.replace(/\.\d+$/, 'Z'),
    updated: s.updatedAt.replace(/\.\d+$/, 'Z'),
    addresses: {},
    accessIPv4: '',
    accessIPv6: '',
    links: [
      { rel: 'self', href: link },
      { rel: 'bookmark', href: link.replace('/v2.1', '') },
    ],
    'OS-DCF:diskConfig': 'MANUAL',
    'OS-EXT-AZ:availability_zone': 'nova',
    config_drive: '',
    key_name: null,
    'OS-SRV-USG:launched_at': s.createdAt,
    'OS-SRV-USG:terminated_at': null,
    'OS-EXT-STS:task_state': s.taskState,
    'OS-EXT-STS:vm_state': s.vmState,
    'OS-EXT-STS:power_state': s.powerState,
    'os-extended-volumes:volumes_attached': [],
    description: null,
    tags: [],
  };
  if (ctx.admin) {
    // Admin-only attributes (os_compute_api:servers:show:host_status and extended attributes).
    view['OS-EXT-SRV-ATTR:host'] = s.host;
    view['OS-EXT-SRV-ATTR:hypervisor_hostname'] = s.node;
    view['OS-EXT-SRV-ATTR:instance_name'] = `instance-${s.id.slice(0, 8)}`;
    if (atLeast(ctx.version, 3)) {
      view['OS-EXT-SRV-ATTR:hostname'] = sanitizedHostname(s.name);
      view['OS-EXT-SRV-ATTR:kernel_id'] = '';
      view['OS-EXT-SRV-ATTR:launch_index'] = 0;
      view['OS-EXT-SRV-ATTR:ramdisk_id'] = '';
      view['OS-EXT-SRV-ATTR:reservation_id'] = `r-${s.id.replace(/-/g, '').slice(0, 8)}`;
      view['OS-EXT-SRV-ATTR:root_device_name'] = '/dev/sda';
      view['OS-EXT-SRV-ATTR:user_data'] = null;
    }
    if (atLeast(ctx.version, 16)) view.host_status = hostStatus(state, s);
  }
  if (PROGRESS_STATUSES.has(view.status as string)) view.progress = 0;
  if (atLeast(ctx.version, 9)) view.locked = s.locked;
  if (atLeast(ctx.version, 73)) view.locked_reason = null;
  return view;
}

export function migrationView(m: SimMigration, v: Version): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: m.id,
    status: m.status,
    instance_uuid: m.instanceUuid,
    source_compute: m.sourceCompute,
    source_node: m.sourceNode,
    dest_compute: m.destCompute,
    dest_node: m.destNode,
    dest_host: null,
    old_instance_type_id: 1,
    new_instance_type_id: 1,
    source_region: 'RegionOne',
    dest_region: 'RegionOne',
    created_at: m.createdAt,
    updated_at: m.updatedAt,
  };
  if (atLeast(v, 23)) view.migration_type = m.migrationType;
  if (atLeast(v, 59)) view.uuid = m.uuid;
  return view;
}

export function aggregateView(a: SimAggregate, v: Version): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: a.id,
    name: a.name,
    availability_zone: a.availabilityZone,
    hosts: a.hosts,
    metadata: a.metadata,
    created_at: a.createdAt,
    updated_at: a.updatedAt,
    deleted_at: null,
    deleted: false,
  };
  if (atLeast(v, 41)) view.uuid = a.uuid;
  return view;
}
