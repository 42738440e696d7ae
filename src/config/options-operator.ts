// [operator] and [detection]: the options Masakari does not have, for running on Kubernetes.

import { hostPort, integer, matching, nameList, oneOf, optional, string } from './parsers.ts';
import { COMPONENT_NAMES, DNS_LABEL, type OptionGroups } from './option-spec.ts';

export const OPERATOR_OPTIONS: OptionGroups<'operator' | 'detection'> = {
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
