// The failure scenarios both engines run. Each has its own segment and host,
// so they run side by side without sharing a per-host lock or a duplicate
// window; server ids are fixed so both simulators hold the same uuids.
import type { SimServerInput } from '../../../tools/simulator/records.ts';

export interface Scenario {
  name: string;
  /** The notification's hostname (a simulator compute host, alone in its segment). */
  host: string;
  type: 'COMPUTE_HOST' | 'VM' | 'PROCESS';
  payload: Record<string, unknown>;
  /** Kill the host's compute in the simulator before notifying. */
  failHost?: boolean;
  segmentEnabled?: boolean;
  /** The notification's host is itself a reserved host. */
  hostReserved?: boolean;
  /** Segment recovery_method (default auto). */
  recoveryMethod?: 'auto' | 'reserved_host' | 'auto_priority' | 'rh_priority';
  /** More hosts of the segment (live simulator hosts no evacuation picks by itself). */
  extraHosts?: { name: string; reserved?: boolean; down?: boolean }[];
  /**
   * How the reference engine gets the notification: `periodic` (default) as a
   * stuck `new` notification through its periodic task, or `rpc` through the
   * RPC entry point the API's cast would reach (process_notification.py).
   */
  referencePath?: 'periodic' | 'rpc';
}

export const INSTANCE_HA_ID = '11111111-1111-4111-8111-111111111111';
export const INSTANCE_PLAIN_ID = '22222222-2222-4222-8222-222222222222';
export const INSTANCE_VM_ID = '33333333-3333-4333-8333-333333333333';
export const INSTANCE_VM_IGNORED_ID = '44444444-4444-4444-8444-444444444444';
export const INSTANCE_VM_PLAIN_ID = '55555555-5555-4555-8555-555555555555';
export const INSTANCE_STOPPED_ID = '66666666-6666-4666-8666-666666666666';
export const INSTANCE_ERROR_ID = '77777777-7777-4777-8777-777777777777';
export const INSTANCE_RESERVED_ID = '88888888-8888-4888-8888-888888888888';
export const INSTANCE_BUSY_ID = '99999999-9999-4999-8999-999999999999';
export const INSTANCE_RESERVED_DOWN_ID = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
export const INSTANCE_VM_STOPPED_ID = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';
export const INSTANCE_RH_PRIORITY_ID = 'cccccccc-cccc-4ccc-8ccc-cccccccccccc';
export const INSTANCE_VM_PAUSED_ID = 'dddddddd-dddd-4ddd-8ddd-dddddddddddd';
export const INSTANCE_VM_RESIZED_ID = 'eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee';
export const INSTANCE_HOST_RESIZED_ID = 'abababab-abab-4bab-8bab-abababababab';

const HOST_DOWN = { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' };

export const SCENARIOS: Scenario[] = [
  { name: 'host-two-instances', host: 'cmp-host', type: 'COMPUTE_HOST', payload: HOST_DOWN, failHost: true },
  { name: 'host-no-instances', host: 'cmp-empty', type: 'COMPUTE_HOST', payload: HOST_DOWN, failHost: true },
  {
    name: 'vm-stopped-failed',
    host: 'cmp-vm',
    type: 'VM',
    payload: { event: 'LIFECYCLE', instance_uuid: INSTANCE_VM_ID, vir_domain_event: 'STOPPED_FAILED' },
  },
  {
    name: 'vm-event-ignored',
    host: 'cmp-vmign',
    type: 'VM',
    payload: { event: 'LIFECYCLE', instance_uuid: INSTANCE_VM_IGNORED_ID, vir_domain_event: 'STARTED_BOOTED' },
  },
  {
    name: 'process-nova-compute',
    host: 'cmp-proc',
    type: 'PROCESS',
    payload: { event: 'STOPPED', process_name: 'nova-compute' },
  },
  {
    name: 'process-other',
    host: 'cmp-procother',
    type: 'PROCESS',
    payload: { event: 'STOPPED', process_name: 'libvirtd' },
  },
  {
    name: 'host-status-unknown',
    host: 'cmp-unknown',
    type: 'COMPUTE_HOST',
    payload: { event: 'STOPPED', host_status: 'UNKNOWN', cluster_status: 'OFFLINE' },
  },
  {
    name: 'disabled-segment',
    host: 'cmp-disabled',
    type: 'COMPUTE_HOST',
    payload: HOST_DOWN,
    failHost: true,
    segmentEnabled: false,
    referencePath: 'rpc',
  },
  // The same through the reference's periodic path, which skips the check (B6).
  {
    name: 'disabled-segment-periodic',
    host: 'cmp-disabled2',
    type: 'COMPUTE_HOST',
    payload: HOST_DOWN,
    failHost: true,
    segmentEnabled: false,
  },
  {
    name: 'vm-not-ha-enabled',
    host: 'cmp-vmplain',
    type: 'VM',
    payload: { event: 'LIFECYCLE', instance_uuid: INSTANCE_VM_PLAIN_ID, vir_domain_event: 'STOPPED_FAILED' },
  },
  { name: 'host-stopped-instance', host: 'cmp-stopped', type: 'COMPUTE_HOST', payload: HOST_DOWN, failHost: true },
  { name: 'host-error-instance', host: 'cmp-error', type: 'COMPUTE_HOST', payload: HOST_DOWN, failHost: true },
  {
    name: 'reserved-host',
    host: 'cmp-rh',
    type: 'COMPUTE_HOST',
    payload: HOST_DOWN,
    failHost: true,
    recoveryMethod: 'reserved_host',
    extraHosts: [{ name: 'spare-rh', reserved: true }],
  },
  // Nova refuses to evacuate while task_state is set: both engines reset the state first.
  { name: 'host-busy-instance', host: 'cmp-busy', type: 'COMPUTE_HOST', payload: HOST_DOWN, failHost: true },
  // The only reserved host is down: Nova finds no valid host, the server goes to error, the recovery fails.
  {
    name: 'reserved-host-down',
    host: 'cmp-rhdown',
    type: 'COMPUTE_HOST',
    payload: HOST_DOWN,
    failHost: true,
    recoveryMethod: 'reserved_host',
    extraHosts: [{ name: 'spare-rhdown', reserved: true, down: true }],
  },
  {
    name: 'reserved-host-no-instances',
    host: 'cmp-rhempty',
    type: 'COMPUTE_HOST',
    payload: HOST_DOWN,
    failHost: true,
    recoveryMethod: 'reserved_host',
    extraHosts: [{ name: 'spare-rhempty', reserved: true }],
  },
  {
    name: 'process-started',
    host: 'cmp-procstart',
    type: 'PROCESS',
    payload: { event: 'STARTED', process_name: 'nova-compute' },
  },
  {
    name: 'host-started',
    host: 'cmp-hoststart',
    type: 'COMPUTE_HOST',
    payload: { event: 'STARTED', host_status: 'NORMAL', cluster_status: 'ONLINE' },
  },
  {
    name: 'vm-already-stopped',
    host: 'cmp-vmstopped',
    type: 'VM',
    payload: { event: 'LIFECYCLE', instance_uuid: INSTANCE_VM_STOPPED_ID, vir_domain_event: 'STOPPED_FAILED' },
  },
  // A paused instance is not recovered: ignored, with the StopInstanceTask message.
  {
    name: 'vm-paused',
    host: 'cmp-vmpaused',
    type: 'VM',
    payload: { event: 'LIFECYCLE', instance_uuid: INSTANCE_VM_PAUSED_ID, vir_domain_event: 'STOPPED_FAILED' },
  },
  // A resized (unconfirmed) instance is reset to active before it is stopped and started again.
  {
    name: 'vm-resized',
    host: 'cmp-vmresized',
    type: 'VM',
    payload: { event: 'LIFECYCLE', instance_uuid: INSTANCE_VM_RESIZED_ID, vir_domain_event: 'STOPPED_FAILED' },
  },
  // Host failure with a running resized instance: reset to error, evacuated, comes back active (no stop).
  { name: 'host-resized-instance', host: 'cmp-resized', type: 'COMPUTE_HOST', payload: HOST_DOWN, failHost: true },
  // rh_priority without any reserved host falls back to the auto flow.
  {
    name: 'rh-priority-no-reserved-host',
    host: 'cmp-rhprio',
    type: 'COMPUTE_HOST',
    payload: HOST_DOWN,
    failHost: true,
    recoveryMethod: 'rh_priority',
  },
  // A process failure puts a reserved host on maintenance but leaves it reserved (only host failures un-reserve).
  {
    name: 'process-on-reserved-host',
    host: 'cmp-procrh',
    type: 'PROCESS',
    payload: { event: 'STOPPED', process_name: 'libvirtd' },
    hostReserved: true,
  },
];

/** Every scenario host plus one spare that receives the evacuations without a target. */
export const SIM_HOSTS = [...SCENARIOS.flatMap((s) => [s.host, ...(s.extraHosts ?? []).map((h) => h.name)]), 'spare1'];

const SCENARIO_SERVERS: SimServerInput[] = [
  { id: INSTANCE_HA_ID, name: 'vm-ha', host: 'cmp-host', metadata: { HA_Enabled: 'True' } },
  { id: INSTANCE_PLAIN_ID, name: 'vm-plain', host: 'cmp-host' },
  { id: INSTANCE_VM_ID, name: 'vm-lifecycle', host: 'cmp-vm', metadata: { HA_Enabled: 'True' } },
  { id: INSTANCE_VM_IGNORED_ID, name: 'vm-ignored', host: 'cmp-vmign', metadata: { HA_Enabled: 'True' } },
  { id: INSTANCE_VM_PLAIN_ID, name: 'vm-not-ha', host: 'cmp-vmplain' },
  {
    id: INSTANCE_STOPPED_ID,
    name: 'vm-stopped',
    host: 'cmp-stopped',
    metadata: { HA_Enabled: 'True' },
    vm_state: 'stopped',
  },
  { id: INSTANCE_ERROR_ID, name: 'vm-error', host: 'cmp-error', metadata: { HA_Enabled: 'True' }, vm_state: 'error' },
  { id: INSTANCE_RESERVED_ID, name: 'vm-rh', host: 'cmp-rh', metadata: { HA_Enabled: 'True' } },
  {
    id: INSTANCE_BUSY_ID,
    name: 'vm-busy',
    host: 'cmp-busy',
    metadata: { HA_Enabled: 'True' },
    task_state: 'migrating',
  },
  { id: INSTANCE_RESERVED_DOWN_ID, name: 'vm-rhdown', host: 'cmp-rhdown', metadata: { HA_Enabled: 'True' } },
  {
    id: INSTANCE_VM_RESIZED_ID,
    name: 'vm-resized',
    host: 'cmp-vmresized',
    metadata: { HA_Enabled: 'True' },
    vm_state: 'resized',
  },
  {
    id: INSTANCE_HOST_RESIZED_ID,
    name: 'vm-host-resized',
    host: 'cmp-resized',
    metadata: { HA_Enabled: 'True' },
    vm_state: 'resized',
  },
  { id: INSTANCE_RH_PRIORITY_ID, name: 'vm-rhprio', host: 'cmp-rhprio', metadata: { HA_Enabled: 'True' } },
  {
    id: INSTANCE_VM_PAUSED_ID,
    name: 'vm-paused',
    host: 'cmp-vmpaused',
    metadata: { HA_Enabled: 'True' },
    vm_state: 'paused',
  },
  {
    id: INSTANCE_VM_STOPPED_ID,
    name: 'vm-already-stopped',
    host: 'cmp-vmstopped',
    metadata: { HA_Enabled: 'True' },
    vm_state: 'stopped',
  },
];

/**
 * Nova (the simulator) sends an evacuation without a target to the
 * least-loaded up host. More idle servers on every other live host than
 * there are such evacuations leave `spare1` the only choice for each of them,
 * whatever their order, so dest_host does not depend on which engine
 * evacuates first.
 */
const FILLERS_PER_HOST = 8;
const LIVE_HOSTS = SCENARIOS.flatMap((s) => [
  ...(s.failHost ? [] : [s.host]),
  ...(s.extraHosts ?? []).filter((h) => !h.down).map((h) => h.name),
]);
const FILLERS: SimServerInput[] = LIVE_HOSTS.flatMap((host, i) =>
  Array.from({ length: FILLERS_PER_HOST }, (_, k) => ({
    id: `ffffffff-0000-4000-8000-${String(i * 10 + k + 1).padStart(12, '0')}`,
    name: `filler-${host}-${k + 1}`,
    host,
  })),
);

export const SIM_SERVERS: SimServerInput[] = [...SCENARIO_SERVERS, ...FILLERS];
