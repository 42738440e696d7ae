// FOR UNIT TESTS ONLY: a server of the fake Nova (fake-nova.ts) in the fake's
// own fields, and its wire view as Nova's API shows it (view, fromWire), so a
// test can give or hook either.
import type { NovaServer } from '../../openstack/types.ts';

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
  /** extra_specs of the embedded flavor; default {}. */
  flavorExtraSpecs?: Record<string, string>;
  /** The image booted from (getImage answers from `images`); unset: booted from a volume. */
  imageId?: string;
}

export const powerFor = (vmState: string): number => (['stopped', 'error', 'shelved'].includes(vmState) ? 4 : 1);

/** A server as Nova's API shows it (the input of addServer for tests written against the wire shape). */
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

export const isWireServer = (s: object): s is NovaServer => 'OS-EXT-STS:vm_state' in s;

export function view(s: FakeServer): NovaServer {
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
    flavor: { original_name: 'm1.tiny', extra_specs: { ...s.flavorExtraSpecs } },
    image: s.imageId ? { id: s.imageId } : '',
  };
}

export function fromWire(v: NovaServer): Partial<FakeServer> & { host: string } {
  const host = v['OS-EXT-SRV-ATTR:host'] ?? '';
  const node = v['OS-EXT-SRV-ATTR:hypervisor_hostname'];
  return {
    id: v.id,
    name: v.name,
    host,
    ...(node && node !== `${host}.nodes.example` ? { node } : {}),
    vmState: v['OS-EXT-STS:vm_state'],
    taskState: v['OS-EXT-STS:task_state'],
    powerState: v['OS-EXT-STS:power_state'],
    locked: v.locked ?? false,
    metadata: { ...v.metadata },
    ...(v.flavor?.extra_specs && Object.keys(v.flavor.extra_specs).length > 0
      ? { flavorExtraSpecs: { ...v.flavor.extra_specs } }
      : {}),
    ...(v.image ? { imageId: v.image.id } : {}),
  };
}
