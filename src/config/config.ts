// CONTRACT for configuration (the loader in src/config/load.ts fills it).
// Group and option names are masakari.conf's, with the same snake_case names
// and defaults (masakari/conf/*.py; docs/configuration.md lists them), so an operator's
// masakari.conf knowledge carries over. OpenKeel-only settings live in the
// `operator` group. Durations are in seconds, as in masakari.conf.

export interface TaskLists {
  pre: string[];
  main: string[];
  post: string[];
}

export interface Config {
  DEFAULT: {
    auth_strategy: 'keystone' | 'noauth2';
    osapi_max_limit: number; // 1000
    duplicate_notification_detection_interval: number; // 180
    wait_period_after_service_update: number; // 180 (upper bound here, see docs)
    wait_period_after_evacuation: number; // 90
    verify_interval: number; // 1
    wait_period_after_power_off: number; // 180
    wait_period_after_power_on: number; // 60
    process_unfinished_notifications_interval: number; // 120
    retry_notification_new_status_interval: number; // 60
    check_expired_notifications_interval: number; // 600
    notifications_expired_interval: number; // 86400
    host_failure_recovery_threads: number; // 3
    nova_catalog_admin_info: string; // 'compute:nova:publicURL'
    os_region_name: string | null;
    nova_api_insecure: boolean;
    nova_ca_certificates_file: string | null;
    os_privileged_user_name: string | null;
    os_privileged_user_password: string | null;
    os_privileged_user_tenant: string | null;
    os_privileged_user_auth_url: string | null;
    os_user_domain_name: string; // 'default'
    os_project_domain_name: string; // 'default'
    os_system_scope: 'all' | null;
    masakari_api_listen: string; // '0.0.0.0'
    masakari_api_listen_port: number; // 15868
    use_ssl: boolean; // false
    /** Replaces scheme, host and port of returned links (masakari/conf/api.py); null: unchanged. */
    osapi_masakari_link_prefix: string | null;
    /** oslo.log's debug: log_level debug unless log_level is set. */
    debug: boolean; // false
  };
  host_failure: {
    evacuate_all_instances: boolean; // true
    ha_enabled_instance_metadata_key: string; // 'HA_Enabled'
    ignore_instances_in_error_state: boolean; // false
    add_reserved_host_to_aggregate: boolean; // false
    service_disable_reason: string; // 'Masakari detected host failed.'
    evacuable_tag: string; // 'evacuable'
    tagged_flavors: boolean; // false
    tagged_images: boolean; // false
    tagged_aggregates: boolean; // false
    skip_servers_with_name: RegExp[]; // []
    priority_metadata_key: string | null; // null
  };
  instance_failure: {
    process_all_instances: boolean; // false
    ha_enabled_instance_metadata_key: string; // 'HA_Enabled'
  };
  process_failure: {
    service_disable_reason: string; // 'Masakari detected process failed.'
    maintenance_only_for_nova_compute: boolean; // false
  };
  taskflow_driver_recovery_flows: {
    host_auto_failure_recovery_tasks: TaskLists;
    host_rh_failure_recovery_tasks: TaskLists;
    instance_failure_recovery_tasks: TaskLists;
    process_failure_recovery_tasks: TaskLists;
  };
  oslo_policy: {
    policy_file: string | null;
  };
  oslo_middleware: {
    /** Honour X-Forwarded-Proto/-Host and Forwarded when building links (oslo.middleware HTTPProxyToWSGI). */
    enable_proxy_headers_parsing: boolean; // false
  };
  wsgi: {
    ssl_cert_file: string | null;
    ssl_key_file: string | null;
    ssl_ca_file: string | null;
  };
  keystone_authtoken: {
    /** keystonemiddleware's service credentials (auth plugin password), used when no other source is. */
    auth_type: 'password' | 'v3password' | null;
    auth_url: string | null;
    username: string | null;
    password: string | null;
    project_name: string | null;
    user_domain_name: string | null;
    project_domain_name: string | null;
    cafile: string | null;
    insecure: boolean; // false
    /** Upper bound on how long a validated token is cached (seconds). */
    token_cache_time: number; // 300
    /** Public Keystone URL named in WWW-Authenticate on a 401; null: the operator's own auth_url. */
    www_authenticate_uri: string | null;
    interface: string; // 'public'
    region_name: string | null;
    /** Timeout of a validation request (seconds); null: operator.openstack_request_timeout. */
    http_connect_timeout: number | null;
    http_request_max_retries: number; // 3
    token_cache_size: number; // 1000
    invalid_token_cache_time: number; // 10
    invalid_token_cache_size: number; // 10000
    max_validations_in_flight: number; // 20
    max_validations_per_second: number; // 50
  };
  /** Built-in failure detection (src/detection/), for segments with spec.detection.enabled. */
  detection: {
    /** Seconds between two looks at Nova's compute services (one GET /os-services for every host). */
    poll_interval: number; // 10
    /** More than this percentage of the watched hosts down at one look (and more than one) is an observation problem. */
    max_down_percent: number; // 50
  };
  operator: {
    namespace: string; // MASAKARI_NAMESPACE, default 'masakari'
    /** Namespace of the admission key Secret; null: `namespace` (MASAKARI_ADMISSION_KEY_NAMESPACE). */
    admission_key_namespace: string | null;
    /** ValidatingAdmissionPolicyBinding guarding the safety overrides; null: not checked (MASAKARI_SAFETY_OVERRIDES_POLICY). */
    safety_overrides_policy: string | null;
    components: Array<'api' | 'engine' | 'remediation' | 'detection'>; // MASAKARI_COMPONENTS
    metrics_listen: string; // '127.0.0.1:8081' (healthz, readyz, metrics)
    /** Own address of /metrics; null: served on metrics_listen (MASAKARI_PROMETHEUS_LISTEN). */
    prometheus_listen: string | null;
    medik8s_lease_namespace: string; // 'medik8s-leases' (NodeHealthCheck's LEASE_NAMESPACE)
    /** Nova microversion for every call (>= 2.53). */
    nova_api_version: string; // '2.53'
    /** Per-request timeout for OpenStack calls (seconds). */
    openstack_request_timeout: number; // 30
    /** Bounded retries for idempotent OpenStack calls. */
    openstack_max_retries: number; // 3
    /** Leader election (engine, remediation). */
    lease_duration: number; // 15
    renew_deadline: number; // 10
    retry_period: number; // 2
    /** Integer ids reserved per process at a time (see docs/design/store.md, "Integer ids"). */
    id_block_size: number; // 20
    /** Days after which finished/failed/ignored notifications are deleted; <= 0 keeps them forever. */
    notification_retention_days: number; // 30
    /** Recovery runs the engine lets run at once, all segments and types together; 0: no cap, as Masakari. */
    max_concurrent_recoveries: number; // 0
    // Added by the process shell (src/main.ts):
    /** pino level: trace, debug, info, warn, error, fatal (MASAKARI_LOG_LEVEL). */
    log_level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'; // 'info'
    /** Deadline for every component's stop() after SIGTERM (seconds). */
    shutdown_timeout: number; // 20
  };
}
