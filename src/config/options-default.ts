// [DEFAULT]: Masakari's masakari/conf/*.py options of the default group, and
// the OpenKeel extensions that belong with them.

import { boolean, hostAddress, integer, oneOf, optional, string, url } from './parsers.ts';
import { seconds, type OptionGroups } from './option-spec.ts';
import { catalogInfo } from './option-parsers.ts';

export const DEFAULT_OPTIONS: OptionGroups<'DEFAULT'> = {
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
};
