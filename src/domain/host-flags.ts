// Masakari's host flags, on_maintenance and reserved, as one rule for every
// reader (REST records, state metrics, import, the engine's reserved-host
// choice). Masakari keeps them as boolean columns of the host row. Here the
// person's intent is spec, and the engine latches what the recovery set
// (masakari/engine/manager.py: on_maintenance=True, reserved=False) in status
// with the generation it saw: status wins only while status.flagsGeneration
// equals metadata.generation, so any later spec change (a person's or
// GitOps' newer intent) makes the spec values win again.
import type { HaHost } from '../model/types.ts';

export interface HostFlagValues {
  reserved: boolean;
  onMaintenance: boolean;
}

export function effectiveFlags(host: HaHost): HostFlagValues {
  const st = host.status;
  const latched = st?.flagsGeneration !== undefined && st.flagsGeneration === host.metadata.generation;
  return {
    reserved: latched && typeof st?.reserved === 'boolean' ? st.reserved : host.spec.reserved === true,
    onMaintenance:
      latched && typeof st?.onMaintenance === 'boolean' ? st.onMaintenance : host.spec.onMaintenance === true,
  };
}
