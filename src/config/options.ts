// Every configuration option: its group, name, type, default and the
// environment variable that sets it, in one table. The loader (load.ts) and the
// documentation test read this table, so an option cannot exist without a
// default, a validation rule and an entry in docs/configuration.md.
//
// Defaults and minimums are Masakari 22.0.0's (masakari/conf/*.py). Where
// Masakari has no lower bound but a value below it would break the engine
// (a negative wait, a 0 s poll interval that spins), the bound is added here and
// marked "stricter than Masakari" in the docs.

import type { Config } from './config.ts';
import {
  InvalidValue,
  boolean,
  hostAddress,
  hostPort,
  integer,
  matching,
  nameList,
  oneOf,
  optional,
  string,
  url,
  type Parser,
} from './parsers.ts';
import { taskLists } from './task-lists.ts';
import { parseCatalogInfo } from '../openstack/catalog.ts';

export type GroupName = keyof Config;

export interface OptionSpec<T> {
  default: T;
  parser: Parser<T>;
  help: string;
  /** A dedicated environment variable (besides MASAKARI__<GROUP>__<OPTION>). */
  env?: string;
  /** Set when the rule is stricter than Masakari's, saying how. */
  stricterThanMasakari?: string;
}

export type OptionTable = { [G in GroupName]: { [O in keyof Config[G]]-?: OptionSpec<Config[G][O]> } };

export const COMPONENT_NAMES = ['api', 'engine', 'remediation', 'detection'] as const;
export type ComponentName = (typeof COMPONENT_NAMES)[number];

const seconds = (min: number) => integer({ min });

/** nova_catalog_admin_info, checked by the parser the Nova client itself uses. */
function catalogInfo(): Parser<string> {
  const what = '<service_type>:<service_name>:<endpoint_type>, the endpoint type public, internal or admin';
  const text = string({ nonEmpty: true });
  return {
    describe: what,
    parse(raw) {
      const value = text.parse(raw);
      try {
        parseCatalogInfo(value);
      } catch {
        throw new InvalidValue(`must be ${what}`);
      }
      return value;
    },
  };
}

/**
 * Regular expressions from a YAML list, or from a string with one pattern per
 * line (an environment variable): not comma-separated, since a pattern may
 * hold a comma ("a{1,3}"). An invalid pattern fails at startup.
 */
function patternList(): Parser<RegExp[]> {
  const requirement = 'must be a list of regular expressions (a YAML list, or one per line)';
  return {
    describe: 'list of regular expressions (YAML list, or one per line)',
    parse(raw) {
      let items: unknown[];
      if (raw === null || raw === undefined || raw === '') return [];
      if (typeof raw === 'string') items = raw.split('\n').filter((line) => line.trim() !== '');
      else if (Array.isArray(raw)) items = raw;
      else throw new InvalidValue(requirement);
      return items.map((item) => {
        if (typeof item !== 'string' || item === '') throw new InvalidValue(requirement);
        try {
          return new RegExp(item);
        } catch (err) {
          throw new InvalidValue(`${requirement}; '${item}' is not one: ${(err as Error).message}`);
        }
      });
    },
  };
}

const EXTENSION = 'OpenKeel extension, not in Masakari:';

// Kubernetes namespace names are DNS-1123 labels.
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export const OPTIONS: OptionTable = {
  DEFAULT: {
    auth_strategy: {
      default: 'keystone',
      parser: oneOf(['keystone', 'noauth2']),
      env: 'MASAKARI_AUTH_STRATEGY',
      help: 'API authentication: keystone validates X-Auth-Token; noauth2 trusts the caller (testing only).',
    },
    osapi_max_limit: {
      default: 1000,
      parser: integer({ min: 1 }),
      help: 'Largest page any list call returns, and the default page size.',
      stricterThanMasakari: 'must be >= 1',
    },
    duplicate_notification_detection_interval: {
      default: 180,
      parser: seconds(0),
      help: 'Window (seconds, over generated_time) in which an identical notification is refused as a duplicate.',
    },
    wait_period_after_service_update: {
      default: 180,
      parser: seconds(0),
      help: "Wait after disabling the failed host's compute service; also the timeout of the process flow's disabled check.",
      stricterThanMasakari: 'must be >= 0',
    },
    wait_period_after_evacuation: {
      default: 90,
      parser: seconds(0),
      help: "Timeout of each instance's evacuation confirmation.",
      stricterThanMasakari: 'must be >= 0',
    },
    verify_interval: {
      default: 1,
      parser: seconds(1),
      help: 'Poll interval of every wait loop against Nova.',
      stricterThanMasakari: 'must be >= 1 (0 would poll Nova in a tight loop)',
    },
    wait_period_after_power_off: {
      default: 180,
      parser: seconds(0),
      help: 'Timeout waiting for an instance to reach stopped.',
      stricterThanMasakari: 'must be >= 0',
    },
    wait_period_after_power_on: {
      default: 60,
      parser: seconds(0),
      help: 'Timeout waiting for an instance to reach active.',
      stricterThanMasakari: 'must be >= 0',
    },
    process_unfinished_notifications_interval: {
      default: 120,
      parser: seconds(1),
      help: 'Spacing of the periodic retry of new and error notifications.',
      stricterThanMasakari: 'must be >= 1',
    },
    retry_notification_new_status_interval: {
      default: 60,
      parser: seconds(0),
      help: 'Age of a new notification before the periodic task picks it up.',
      stricterThanMasakari: 'must be >= 0',
    },
    check_expired_notifications_interval: {
      default: 600,
      parser: seconds(1),
      help: 'Spacing of the periodic expiry check.',
      stricterThanMasakari: 'must be >= 1',
    },
    notifications_expired_interval: {
      default: 86400,
      parser: seconds(0),
      help: 'Age (by generated_time) after which new, running and error notifications become failed.',
      stricterThanMasakari: 'must be >= 0',
    },
    host_failure_recovery_threads: {
      default: 3,
      parser: integer({ min: 1 }),
      help: 'Concurrent evacuations per host-failure recovery.',
    },
    nova_catalog_admin_info: {
      default: 'compute:nova:publicURL',
      parser: catalogInfo(),
      help: "Service catalog entry of Nova; OS_INTERFACE or the cloud's interface, when given, replaces its endpoint type.",
    },
    os_region_name: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'Region of the Nova endpoint (fallback when OS_REGION_NAME and clouds.yaml give none).',
    },
    nova_api_insecure: {
      default: false,
      parser: boolean(),
      help: 'Skip TLS verification towards Keystone and Nova (fallback when OS_INSECURE and clouds.yaml give none).',
    },
    nova_ca_certificates_file: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'CA bundle for Keystone and Nova (fallback when OS_CACERT and clouds.yaml give none).',
    },
    os_privileged_user_name: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'Nova service user, used only when neither OS_CLOUD nor OS_AUTH_URL is set.',
    },
    os_privileged_user_password: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'Password of os_privileged_user_name. Prefer MASAKARI__DEFAULT__OS_PRIVILEGED_USER_PASSWORD from a Secret.',
    },
    os_privileged_user_tenant: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'Project of os_privileged_user_name.',
    },
    os_privileged_user_auth_url: {
      default: null,
      parser: optional(url()),
      help: 'Keystone URL for os_privileged_user_name.',
    },
    os_user_domain_name: {
      default: 'default',
      parser: string({ nonEmpty: true }),
      help: 'User domain of os_privileged_user_name ("default" means the domain with id default).',
    },
    os_project_domain_name: {
      default: 'default',
      parser: string({ nonEmpty: true }),
      help: 'Project domain of os_privileged_user_tenant ("default" means the domain with id default).',
    },
    os_system_scope: {
      default: null,
      parser: optional(oneOf(['all'])),
      help: 'Ask Keystone for a system-scoped token ("all") for os_privileged_user_name instead of a project-scoped one; os_privileged_user_tenant must then be unset.',
    },
    masakari_api_listen: {
      default: '0.0.0.0',
      parser: hostAddress(),
      help: 'Address the Masakari API listens on (MASAKARI_LISTEN sets it together with the port).',
    },
    masakari_api_listen_port: {
      default: 15868,
      parser: integer({ min: 1, max: 65535 }),
      help: 'Port the Masakari API listens on.',
    },
    use_ssl: {
      default: false,
      parser: boolean(),
      help: 'Serve the Masakari API over TLS with [wsgi] ssl_cert_file and ssl_key_file; the pair is re-read when the files change.',
    },
    osapi_masakari_link_prefix: {
      default: null,
      parser: optional(url()),
      stricterThanMasakari: 'must be an http or https URL',
      help: 'Replaces the scheme, host and port of the links the API returns and goes before their path, e.g. https://cloud.example.com/instance-ha; unset: links name the host the request came to.',
    },
    debug: {
      default: false,
      parser: boolean(),
      help: "oslo.log's switch: true sets [operator] log_level to debug, unless log_level (or MASAKARI_LOG_LEVEL) is set.",
    },
  },
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
  oslo_policy: {
    policy_file: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      env: 'MASAKARI_POLICY_FILE',
      help: 'YAML or JSON file of policy rules overriding the built-in defaults.',
    },
  },
  oslo_middleware: {
    enable_proxy_headers_parsing: {
      default: false,
      parser: boolean(),
      help: 'Take the scheme, host and path prefix of links from Forwarded, or X-Forwarded-Proto, X-Forwarded-Host and X-Forwarded-Prefix (set it only behind a proxy that sets them).',
    },
  },
  wsgi: {
    ssl_cert_file: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'PEM certificate (chain) of the API, with use_ssl.',
    },
    ssl_key_file: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'PEM private key of the API, with use_ssl.',
    },
    ssl_ca_file: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'With use_ssl: CA bundle that client certificates must chain to; set, a client without one is refused.',
    },
  },
  keystone_authtoken: {
    auth_type: {
      default: null,
      parser: optional(oneOf(['password', 'v3password'])),
      help: "keystonemiddleware's auth plugin; with auth_url, username and password set, these credentials are used when no other OpenStack credentials are (OS_CLOUD, OS_AUTH_URL, os_privileged_user_*).",
    },
    auth_url: {
      default: null,
      parser: optional(url()),
      help: 'Keystone URL of the service credentials below.',
    },
    username: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'Service user that validates tokens (used as said under auth_type).',
    },
    password: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'Password of username. Prefer MASAKARI__KEYSTONE_AUTHTOKEN__PASSWORD from a Secret.',
    },
    project_name: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'Project of username.',
    },
    user_domain_name: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'Domain of username; unset: the domain with id default.',
    },
    project_domain_name: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'Domain of project_name; unset: the domain with id default.',
    },
    cafile: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'CA bundle for Keystone and Nova when these credentials are used.',
    },
    insecure: {
      default: false,
      parser: boolean(),
      help: 'Skip TLS verification when these credentials are used.',
    },
    token_cache_time: {
      default: 300,
      parser: integer({ min: -1 }),
      help: 'Longest time (seconds) a validated token is cached; -1 disables the cache, as in keystonemiddleware.',
    },
    www_authenticate_uri: {
      default: null,
      parser: optional(url()),
      help: "Keystone URL clients are sent to in WWW-Authenticate on a 401 (keystonemiddleware's option); unset, the operator's own auth_url, which may be an internal one.",
    },
    interface: {
      default: 'public',
      parser: oneOf(['public', 'internal', 'admin']),
      help: 'Keystone endpoint interface used to validate tokens.',
    },
    region_name: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'Region of the Keystone endpoint used to validate tokens.',
    },
    http_connect_timeout: {
      default: null,
      parser: optional(integer({ min: 1 })),
      help: "Timeout (seconds) of each token validation request (keystonemiddleware's option); null: operator.openstack_request_timeout, as keystonemiddleware's own unset value would mean no timeout at all.",
    },
    http_request_max_retries: {
      default: 3,
      parser: integer({ min: 0, max: 10 }),
      help: "Retries of a token validation request after a timeout, connection error or 5xx (keystonemiddleware's option).",
    },
    token_cache_size: {
      default: 1000,
      parser: integer({ min: 1 }),
      help: 'OpenKeel extension: Valid tokens remembered (least recently used goes first); invalid ones are kept apart and cannot evict them.',
    },
    invalid_token_cache_time: {
      default: 10,
      parser: integer({ min: 0 }),
      help: 'OpenKeel extension: Seconds an invalid token is remembered, so that it is not sent to Keystone again (at most token_cache_time; 0: not remembered).',
    },
    invalid_token_cache_size: {
      default: 10000,
      parser: integer({ min: 1 }),
      help: 'OpenKeel extension: Invalid tokens remembered, in a cache of their own.',
    },
    max_validations_in_flight: {
      default: 20,
      parser: integer({ min: 1 }),
      help: 'OpenKeel extension: Token validations waiting on Keystone at once (one per distinct unseen token; requests with the same token share one). A request that would need one more is answered 503 with Retry-After: 1.',
    },
    max_validations_per_second: {
      default: 50,
      parser: integer({ min: 1 }),
      help: 'OpenKeel extension: Token validations started per second on average (bursts up to max(max_validations_in_flight, this)); beyond it, 503 with Retry-After: 1.',
    },
  },
  detection: {
    poll_interval: {
      default: 10,
      parser: integer({ min: 1, max: 3600 }),
      help:
        "OpenKeel extension: seconds between two looks of the built-in failure detection (segments with spec.detection.enabled): one GET /os-services?binary=nova-compute for every watched host at once, never one call per host, and the Ready condition of the hosts' Nodes from a watched cache. A host must stay down for its segment's detection.gracePeriodSeconds before a notification is raised (docs/operations.md \"Built-in detection\").",
    },
    max_down_percent: {
      default: 50,
      parser: integer({ min: 0, max: 100 }),
      help:
        'OpenKeel extension: more than this percentage of the watched hosts down at one look (and more than one host) is taken for an observation problem (a network partition, a Nova or message-bus outage), not failed hosts: no notification is raised until it clears, and the alert MasakariDetectionBlind fires. 100: never.',
    },
  },
  operator: {
    namespace: {
      default: 'masakari',
      parser: matching(DNS_LABEL, 'a Kubernetes namespace name (DNS-1123 label)'),
      env: 'MASAKARI_NAMESPACE',
      help: 'Namespace holding the FailoverSegment, HaHost and Notification resources.',
    },
    admission_key_namespace: {
      default: null,
      parser: optional(matching(DNS_LABEL, 'a Kubernetes namespace name (DNS-1123 label)')),
      env: 'MASAKARI_ADMISSION_KEY_NAMESPACE',
      help:
        'Namespace of the admission key Secret masakari-admission-seal; null: `namespace`. Set it to the ' +
        "operator's own namespace when the objects live in another, so that whoever may read Secrets or run pods " +
        'there cannot read or choose the key (docs/operations.md "The admission key").',
    },
    safety_overrides_policy: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      env: 'MASAKARI_SAFETY_OVERRIDES_POLICY',
      help:
        'ValidatingAdmissionPolicyBinding that lets only approvers write the annotations fencing-approved-by and ' +
        'recovery-released-by (the chart sets <namespace>-<fullname>-safety-overrides). While it is missing or does not deny, ' +
        'those overrides are not honoured; null: not checked (docs/operations.md "Who may override safety").',
    },
    components: {
      default: ['api', 'engine', 'remediation', 'detection'],
      parser: nameList(COMPONENT_NAMES),
      env: 'MASAKARI_COMPONENTS',
      help: 'Components this process runs.',
    },
    metrics_listen: {
      default: '127.0.0.1:8081',
      parser: hostPort(),
      env: 'MASAKARI_METRICS_LISTEN',
      help: 'Address of /healthz, /readyz and /metrics (the image sets 0.0.0.0:8081 so probes and Prometheus reach it).',
    },
    prometheus_listen: {
      default: null,
      parser: optional(hostPort()),
      env: 'MASAKARI_PROMETHEUS_LISTEN',
      help: 'Own address of /metrics, which then leaves metrics_listen (probes stay there), so a NetworkPolicy can admit Prometheus to it alone; null: /metrics is served on metrics_listen.',
    },
    medik8s_lease_namespace: {
      default: 'medik8s-leases',
      parser: matching(DNS_LABEL, 'a Kubernetes namespace name (DNS-1123 label)'),
      env: 'MASAKARI_MEDIK8S_LEASE_NAMESPACE',
      help: "Namespace of the Medik8s node leases the remediator respects (NodeHealthCheck's LEASE_NAMESPACE).",
    },
    nova_api_version: {
      default: '2.53',
      parser: matching(/^2\.(5[3-9]|[6-9]\d|\d{3,})$/, 'a Nova microversion 2.53 or later, e.g. "2.53"'),
      help: 'Nova microversion sent with every call, except evacuate, which is sent at 2.94 at most (from 2.95 Nova leaves evacuated servers stopped).',
    },
    openstack_request_timeout: {
      default: 30,
      parser: integer({ min: 1 }),
      help: 'Timeout (seconds) of each Keystone or Nova request.',
    },
    openstack_max_retries: {
      default: 3,
      parser: integer({ min: 0, max: 10 }),
      help: 'Retries of a Keystone or Nova call: GET/PUT after a timeout, connection error or 5xx; any call that never reached the server; lock, unlock, reset-state and add-host also after any 5xx, timeout or dropped connection.',
    },
    lease_duration: {
      default: 15,
      parser: integer({ min: 2 }),
      help: 'Leader-election lease duration (seconds) for engine and remediation.',
    },
    renew_deadline: {
      default: 10,
      parser: integer({ min: 1 }),
      help: 'Time (seconds) the leader keeps trying to renew before it steps down; must be less than lease_duration.',
    },
    retry_period: {
      default: 2,
      parser: integer({ min: 1 }),
      help: 'Spacing (seconds) of leader-election attempts; must be less than renew_deadline.',
    },
    id_block_size: {
      default: 20,
      parser: integer({ min: 1, max: 10000 }),
      help: 'Integer ids a process reserves at a time for new objects.',
    },
    notification_retention_days: {
      default: 30,
      parser: integer(),
      help: 'Notifications that ended (finished, failed, ignored) more than this many days ago are deleted, with their vmoves, by an hourly task on the store leader; 0 or negative keeps them forever, as Masakari does. `masakari-operator purge` does the same on demand.',
    },
    max_concurrent_recoveries: {
      default: 0,
      parser: integer({ min: 0 }),
      help: 'Global brake on mass failure: the most recovery runs (host, instance and process failures, all segments) running at once; a notification beyond it stays new with the condition RecoveryHeld (reason GlobalRecoveryCap) until a run ends or a person sets the annotation masakari.openkeel.io/recovery-released-by on it. A resumed run is never held. 0: no cap, as Masakari.',
    },
    log_level: {
      default: 'info',
      parser: oneOf(['trace', 'debug', 'info', 'warn', 'error', 'fatal']),
      env: 'MASAKARI_LOG_LEVEL',
      help: 'Lowest log level written (JSON lines on stdout).',
    },
    shutdown_timeout: {
      default: 20,
      parser: integer({ min: 1 }),
      help: "Deadline (seconds) for the components' graceful stop after SIGTERM; keep it below the pod's terminationGracePeriodSeconds.",
    },
  },
};
