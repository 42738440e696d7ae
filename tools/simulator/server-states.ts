// Nova's server states: vm_state to power_state (nova/compute/power_state.py)
// and to the API's status (nova/api/openstack/common.py _STATE_MAP).

export const POWER_STATE = { NOSTATE: 0, RUNNING: 1, PAUSED: 3, SHUTDOWN: 4, CRASHED: 6, SUSPENDED: 7 } as const;

export function powerStateFor(vmState: string): number {
  switch (vmState) {
    case 'active':
    case 'rescued':
    case 'resized':
      return POWER_STATE.RUNNING;
    case 'stopped':
    case 'shelved':
    case 'shelved_offloaded':
      return POWER_STATE.SHUTDOWN;
    case 'paused':
      return POWER_STATE.PAUSED;
    case 'suspended':
      return POWER_STATE.SUSPENDED;
    default:
      return POWER_STATE.NOSTATE;
  }
}

const STATUS_BY_VM_STATE: Record<string, string> = {
  active: 'ACTIVE',
  building: 'BUILD',
  stopped: 'SHUTOFF',
  resized: 'VERIFY_RESIZE',
  paused: 'PAUSED',
  suspended: 'SUSPENDED',
  rescued: 'RESCUE',
  error: 'ERROR',
  deleted: 'DELETED',
  soft_deleted: 'SOFT_DELETED',
  shelved: 'SHELVED',
  shelved_offloaded: 'SHELVED_OFFLOADED',
};

/** Nova's API status from vm_state and task_state (nova/api/openstack/common.py _STATE_MAP, the parts we model). */
export function serverStatus(vmState: string, taskState: string | null): string {
  if (taskState === 'rebuilding' && ['active', 'stopped', 'error'].includes(vmState)) return 'REBUILD';
  return STATUS_BY_VM_STATE[vmState] ?? 'UNKNOWN';
}
