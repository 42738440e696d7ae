// The recovery task names Masakari ships (its setup.cfg entry points in the
// `masakari.task_flow.tasks` namespace) and the recovery each belongs to.
// Plain data: the configuration validates [taskflow_driver_recovery_flows]
// against it, and the engine's workflows (src/engine/workflows/) register one
// implementation per name.

/** Which recovery a task list drives; each task belongs to one (no_op to any). */
export type RecoveryFlow = 'host failure' | 'instance failure' | 'process failure';

/** Every task name Masakari ships, with the recovery it belongs to ('any' for no_op). */
export const MASAKARI_TASK_NAMES: Readonly<Record<string, RecoveryFlow | 'any'>> = {
  disable_compute_service_task: 'host failure',
  prepare_HA_enabled_instances_task: 'host failure',
  evacuate_instances_task: 'host failure',
  stop_instance_task: 'instance failure',
  start_instance_task: 'instance failure',
  confirm_instance_active_task: 'instance failure',
  disable_compute_node_task: 'process failure',
  confirm_compute_node_disabled_task: 'process failure',
  no_op: 'any',
};

/**
 * OpenKeel extension: the record, in recovery_workflow_details, of the
 * engine's BMC power-off of a host before its recovery (one progress line per
 * attempt; src/engine/gates/bmc-fence.ts). Not a Masakari task: never configured,
 * never reverted.
 */
export const BMC_POWER_OFF_TASK = 'BmcPowerOffTask';
