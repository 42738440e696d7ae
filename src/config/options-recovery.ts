// The recovery options: [host_failure], [instance_failure], [process_failure]
// and the task lists of [taskflow_driver_recovery_flows] (masakari/conf/engine.py).

import { boolean, optional, string } from './parsers.ts';
import { EXTENSION, type OptionGroups } from './option-spec.ts';
import { patternList } from './option-parsers.ts';
import { taskLists } from './task-lists.ts';

export const RECOVERY_OPTIONS: OptionGroups<'host_failure' | 'instance_failure' | 'process_failure' | 'taskflow_driver_recovery_flows'> = {
  host_failure: {
    evacuate_all_instances: {
      default: true,
      parser: boolean(),
      help: 'Evacuate instances without the HA metadata too (after the HA-enabled ones).',
    },
    ha_enabled_instance_metadata_key: {
      default: 'HA_Enabled',
      parser: string({ nonEmpty: true }),
      help: 'Instance metadata key that marks an instance HA-enabled for host recovery.',
    },
    ignore_instances_in_error_state: {
      default: false,
      parser: boolean(),
      help: 'Leave instances in vm_state error on the failed host.',
    },
    add_reserved_host_to_aggregate: {
      default: false,
      parser: boolean(),
      help: 'Add the chosen reserved host to every aggregate of the failed host.',
    },
    service_disable_reason: {
      default: 'Masakari detected host failed.',
      parser: string(),
      help: "disabled_reason set on the failed host's nova-compute service.",
    },
    evacuable_tag: {
      default: 'evacuable',
      parser: string({ nonEmpty: true }),
      help: `${EXTENSION} key of the flavor extra spec, image property and aggregate metadata read by tagged_flavors, tagged_images and tagged_aggregates; a true value (1, t, true, on, y, yes) tags (Red Hat InstanceHA's EVACUABLE_TAG).`,
    },
    tagged_flavors: {
      default: false,
      parser: boolean(),
      help: `${EXTENSION} also select an instance whose flavor has the evacuable_tag extra spec set true (InstanceHA's TAGGED_FLAVORS).`,
    },
    tagged_images: {
      default: false,
      parser: boolean(),
      help: `${EXTENSION} also select an instance whose Glance image has the evacuable_tag property set true (InstanceHA's TAGGED_IMAGES); one GET per distinct image per recovery.`,
    },
    tagged_aggregates: {
      default: false,
      parser: boolean(),
      help: `${EXTENSION} recover a host only if it is in an aggregate whose evacuable_tag metadata is true; any other host's recovery is skipped, no instance moved (InstanceHA's TAGGED_AGGREGATES).`,
    },
    skip_servers_with_name: {
      default: [],
      parser: patternList(),
      help: `${EXTENSION} instances whose name matches any of these regular expressions (JavaScript syntax, unanchored) are never evacuated; each is named in the progress of PrepareHAEnabledInstancesTask.`,
    },
    priority_metadata_key: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: `${EXTENSION} instance metadata key holding a recovery priority (an integer, higher evacuated first; missing or not an integer counts as 0; ties keep Masakari's order). Unset: Masakari's order.`,
    },
  },
  instance_failure: {
    process_all_instances: {
      default: false,
      parser: boolean(),
      help: 'Recover instance failures even without the HA metadata.',
    },
    ha_enabled_instance_metadata_key: {
      default: 'HA_Enabled',
      parser: string({ nonEmpty: true }),
      help: 'Instance metadata key that marks an instance HA-enabled for instance recovery.',
    },
  },
  process_failure: {
    service_disable_reason: {
      default: 'Masakari detected process failed.',
      parser: string(),
      help: "disabled_reason set on the host's nova-compute service after a process failure.",
    },
    maintenance_only_for_nova_compute: {
      default: false,
      parser: boolean(),
      help: `${EXTENSION} a PROCESS STOPPED notification puts the host on maintenance only for the process nova-compute (Masakari: for any process, bug B7, so a stopped libvirtd makes the API refuse a later host failure with 409).`,
    },
  },
  taskflow_driver_recovery_flows: {
    host_auto_failure_recovery_tasks: {
      default: {
        pre: ['disable_compute_service_task'],
        main: ['prepare_HA_enabled_instances_task'],
        post: ['evacuate_instances_task'],
      },
      parser: taskLists('host failure'),
      help: 'Tasks of the host recovery with recovery_method auto.',
    },
    host_rh_failure_recovery_tasks: {
      default: {
        pre: ['disable_compute_service_task'],
        main: ['prepare_HA_enabled_instances_task', 'evacuate_instances_task'],
        post: [],
      },
      parser: taskLists('host failure'),
      help: 'Tasks of the host recovery with recovery_method reserved_host (main is retried per reserved host).',
    },
    instance_failure_recovery_tasks: {
      default: {
        pre: ['stop_instance_task'],
        main: ['start_instance_task'],
        post: ['confirm_instance_active_task'],
      },
      parser: taskLists('instance failure'),
      help: 'Tasks of the instance recovery.',
    },
    process_failure_recovery_tasks: {
      default: {
        pre: ['disable_compute_node_task'],
        main: ['confirm_compute_node_disabled_task'],
        post: [],
      },
      parser: taskLists('process failure'),
      help: 'Tasks of the process recovery.',
    },
  },
};
