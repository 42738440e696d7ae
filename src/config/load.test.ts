import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { thrown } from '../testing/expect-error.ts';
import { ConfigError, loadConfig, metricsListenAddress } from './load.ts';

const FILE = '/etc/masakari/config.yaml';

/** Loads with the given environment and, when yaml is given, a config file holding it. */
function load(env: Record<string, string> = {}, yaml?: string) {
  return loadConfig({
    env: yaml === undefined ? env : { MASAKARI_CONFIG: FILE, ...env },
    readFile: (path) => {
      if (path !== FILE || yaml === undefined) throw new Error(`ENOENT: no such file, open '${path}'`);
      return yaml;
    },
  });
}

const failure = (env: Record<string, string>, yaml?: string): string =>
  thrown(() => load(env, yaml), ConfigError).message;

test('without a file or variables every option has the Masakari default', () => {
  const { config, files, warnings } = load();
  assert.equal(files, []);
  assert.equal(warnings, []);
  assert.is(config.DEFAULT.auth_strategy, 'keystone');
  assert.is(config.DEFAULT.osapi_max_limit, 1000);
  assert.is(config.DEFAULT.duplicate_notification_detection_interval, 180);
  assert.is(config.DEFAULT.wait_period_after_service_update, 180);
  assert.is(config.DEFAULT.wait_period_after_evacuation, 90);
  assert.is(config.DEFAULT.verify_interval, 1);
  assert.is(config.DEFAULT.wait_period_after_power_off, 180);
  assert.is(config.DEFAULT.wait_period_after_power_on, 60);
  assert.is(config.DEFAULT.process_unfinished_notifications_interval, 120);
  assert.is(config.DEFAULT.retry_notification_new_status_interval, 60);
  assert.is(config.DEFAULT.check_expired_notifications_interval, 600);
  assert.is(config.DEFAULT.notifications_expired_interval, 86400);
  assert.is(config.DEFAULT.host_failure_recovery_threads, 3);
  assert.is(config.DEFAULT.nova_catalog_admin_info, 'compute:nova:publicURL');
  assert.is(config.DEFAULT.os_region_name, null);
  assert.is(config.DEFAULT.nova_api_insecure, false);
  assert.is(config.DEFAULT.os_privileged_user_name, null);
  assert.is(config.DEFAULT.os_user_domain_name, 'default');
  assert.is(config.DEFAULT.os_project_domain_name, 'default');
  assert.is(config.DEFAULT.masakari_api_listen, '0.0.0.0');
  assert.is(config.DEFAULT.masakari_api_listen_port, 15868);
  assert.equal(config.host_failure, {
    evacuate_all_instances: true,
    ha_enabled_instance_metadata_key: 'HA_Enabled',
    ignore_instances_in_error_state: false,
    add_reserved_host_to_aggregate: false,
    service_disable_reason: 'Masakari detected host failed.',
    evacuable_tag: 'evacuable',
    tagged_flavors: false,
    tagged_images: false,
    tagged_aggregates: false,
    skip_servers_with_name: [],
    priority_metadata_key: null,
  });
  assert.equal(config.instance_failure, { process_all_instances: false, ha_enabled_instance_metadata_key: 'HA_Enabled' });
  assert.equal(config.process_failure, {
    service_disable_reason: 'Masakari detected process failed.',
    maintenance_only_for_nova_compute: false,
  });
  assert.equal(config.taskflow_driver_recovery_flows.host_rh_failure_recovery_tasks, {
    pre: ['disable_compute_service_task'],
    main: ['prepare_HA_enabled_instances_task', 'evacuate_instances_task'],
    post: [],
  });
  assert.equal(config.oslo_policy, { policy_file: null });
  assert.equal(config.oslo_middleware, { enable_proxy_headers_parsing: false });
  assert.is(config.DEFAULT.osapi_masakari_link_prefix, null);
  assert.is(config.DEFAULT.debug, false);
  assert.equal(config.keystone_authtoken, {
    auth_type: null,
    auth_url: null,
    username: null,
    password: null,
    project_name: null,
    user_domain_name: null,
    project_domain_name: null,
    cafile: null,
    insecure: false,
    token_cache_time: 300,
    www_authenticate_uri: null,
    interface: 'public',
    region_name: null,
    http_connect_timeout: null,
    http_request_max_retries: 3,
    token_cache_size: 1000,
    invalid_token_cache_time: 10,
    invalid_token_cache_size: 10000,
    max_validations_in_flight: 20,
    max_validations_per_second: 50,
  });
  assert.is(config.operator.namespace, 'masakari');
  assert.equal(config.operator.components, ['api', 'engine', 'remediation', 'detection']);
  assert.equal(config.detection, { poll_interval: 10, max_down_percent: 50 });
  assert.is(config.operator.metrics_listen, '127.0.0.1:8081');
  assert.is(config.operator.nova_api_version, '2.53');
  assert.is(config.operator.log_level, 'info');
  assert.is(config.operator.shutdown_timeout, 20);
});

test('each load gets its own copy of the defaults', () => {
  const first = load().config;
  first.taskflow_driver_recovery_flows.host_auto_failure_recovery_tasks.pre.push('no_op');
  first.operator.components.pop();
  const second = load().config;
  assert.equal(second.taskflow_driver_recovery_flows.host_auto_failure_recovery_tasks.pre, [
    'disable_compute_service_task',
  ]);
  assert.equal(second.operator.components, ['api', 'engine', 'remediation', 'detection']);
});

test('the YAML file sets options by masakari.conf group and name', () => {
  const { config, files } = load(
    {},
    `
DEFAULT:
  host_failure_recovery_threads: 5
  nova_api_insecure: true
  os_region_name: RegionTwo
host_failure:
  evacuate_all_instances: false
keystone_authtoken:
  token_cache_time: -1
operator:
  components: [api, engine]
`,
  );
  assert.equal(files, [FILE]);
  assert.is(config.DEFAULT.host_failure_recovery_threads, 5);
  assert.is(config.DEFAULT.nova_api_insecure, true);
  assert.is(config.DEFAULT.os_region_name, 'RegionTwo');
  assert.is(config.host_failure.evacuate_all_instances, false);
  assert.is(config.keystone_authtoken.token_cache_time, -1);
  assert.equal(config.operator.components, ['api', 'engine']);
  assert.is(config.DEFAULT.verify_interval, 1, 'options the file does not name keep their default');
});

test('values written as masakari.conf strings are read as oslo.config reads them', () => {
  const { config } = load(
    {},
    `
DEFAULT:
  host_failure_recovery_threads: " 4 "
  nova_api_insecure: "True"
host_failure:
  evacuate_all_instances: "no"
  ignore_instances_in_error_state: "on"
`,
  );
  assert.is(config.DEFAULT.host_failure_recovery_threads, 4);
  assert.is(config.DEFAULT.nova_api_insecure, true);
  assert.is(config.host_failure.evacuate_all_instances, false);
  assert.is(config.host_failure.ignore_instances_in_error_state, true);
});

test('an empty file, a comment-only file and an empty group leave the defaults', () => {
  assert.is(load({}, '').config.DEFAULT.osapi_max_limit, 1000);
  assert.is(load({}, '# nothing yet\n').config.DEFAULT.osapi_max_limit, 1000);
  assert.is(load({}, 'DEFAULT:\n').config.DEFAULT.osapi_max_limit, 1000);
});

test('a value below an option minimum fails naming the option', () => {
  assert.is(
    failure({}, 'DEFAULT:\n  host_failure_recovery_threads: zero\n'),
    'config: [DEFAULT] host_failure_recovery_threads must be an integer >= 1, got "zero"',
  );
  assert.is(
    failure({}, 'DEFAULT:\n  host_failure_recovery_threads: 0\n'),
    'config: [DEFAULT] host_failure_recovery_threads must be an integer >= 1, got 0',
  );
  assert.is(
    failure({}, 'DEFAULT:\n  duplicate_notification_detection_interval: -1\n'),
    'config: [DEFAULT] duplicate_notification_detection_interval must be an integer >= 0, got -1',
  );
  assert.is(
    failure({}, 'DEFAULT:\n  verify_interval: 0\n'),
    'config: [DEFAULT] verify_interval must be an integer >= 1, got 0',
  );
});

test('a port outside 1..65535 fails naming the option', () => {
  assert.is(
    failure({}, 'DEFAULT:\n  masakari_api_listen_port: 70000\n'),
    'config: [DEFAULT] masakari_api_listen_port must be an integer between 1 and 65535, got 70000',
  );
});

test('a fractional or non-numeric integer fails', () => {
  assert.match(failure({}, 'DEFAULT:\n  osapi_max_limit: 2.5\n'), '[DEFAULT] osapi_max_limit must be an integer >= 1');
  assert.match(failure({}, 'DEFAULT:\n  osapi_max_limit: [1]\n'), 'got [1]');
});

test('a non-boolean for a boolean option fails naming the option', () => {
  assert.is(
    failure({}, 'host_failure:\n  evacuate_all_instances: maybe\n'),
    'config: [host_failure] evacuate_all_instances must be a boolean (true or false), got "maybe"',
  );
});

test('a value outside the choices fails listing them', () => {
  assert.is(
    failure({}, 'DEFAULT:\n  auth_strategy: basic\n'),
    'config: [DEFAULT] auth_strategy must be one of keystone, noauth2, got "basic"',
  );
  assert.match(failure({}, 'keystone_authtoken:\n  interface: publicURL\n'), 'must be one of public, internal, admin');
  assert.match(failure({}, 'operator:\n  log_level: verbose\n'), '[operator] log_level must be one of trace');
});

test('a non-string for a string option fails, a number is taken as text', () => {
  assert.match(
    failure({}, 'host_failure:\n  ha_enabled_instance_metadata_key: [a]\n'),
    '[host_failure] ha_enabled_instance_metadata_key must be a non-empty string, got ["a"]',
  );
  assert.match(failure({}, 'host_failure:\n  ha_enabled_instance_metadata_key: ""\n'), 'must be a non-empty string');
  assert.is(load({}, 'DEFAULT:\n  os_region_name: 1\n').config.DEFAULT.os_region_name, '1');
});

test('optional options accept null and an empty value as unset', () => {
  const { config } = load({}, 'DEFAULT:\n  os_region_name: ~\n  nova_ca_certificates_file: ""\n');
  assert.is(config.DEFAULT.os_region_name, null);
  assert.is(config.DEFAULT.nova_ca_certificates_file, null);
});

test('os_privileged_user_auth_url must be an http(s) URL', () => {
  assert.is(
    failure({}, 'DEFAULT:\n  os_privileged_user_auth_url: keystone:5000\n'),
    'config: [DEFAULT] os_privileged_user_auth_url must be an http or https URL, got "keystone:5000"',
  );
  assert.is(
    load({}, 'DEFAULT:\n  os_privileged_user_auth_url: http://keystone:5000/v3\n').config.DEFAULT
      .os_privileged_user_auth_url,
    'http://keystone:5000/v3',
  );
});

test('nova_catalog_admin_info must have three colon-separated parts and a known endpoint type', () => {
  assert.match(
    failure({}, 'DEFAULT:\n  nova_catalog_admin_info: compute:nova\n'),
    '[DEFAULT] nova_catalog_admin_info must be <service_type>:<service_name>:<endpoint_type>, the endpoint type public, internal or admin, got "compute:nova"',
  );
  assert.match(failure({}, 'DEFAULT:\n  nova_catalog_admin_info: compute:nova:privateURL\n'), 'got "compute:nova:privateURL"');
  assert.is(
    load({}, 'DEFAULT:\n  nova_catalog_admin_info: "compute::internalURL"\n').config.DEFAULT.nova_catalog_admin_info,
    'compute::internalURL',
    'an empty service name matches any, as in the Nova client',
  );
});

test('masakari_api_listen must be an IP address or a host name', () => {
  assert.match(failure({}, 'DEFAULT:\n  masakari_api_listen: "not an address"\n'), 'must be an IP address or a host name');
  assert.is(load({}, 'DEFAULT:\n  masakari_api_listen: "::"\n').config.DEFAULT.masakari_api_listen, '::');
});

test('an unknown group in YAML fails naming it and the nearest known one', () => {
  assert.is(
    failure({}, 'host_failur:\n  evacuate_all_instances: false\n'),
    `config: [host_failur] in ${FILE} is not a known group (did you mean host_failure?)`,
  );
});

test('an unknown option fails naming it', () => {
  assert.is(
    failure({}, 'DEFAULT:\n  host_failure_recovery_thread: 2\n'),
    'config: [DEFAULT] host_failure_recovery_thread is not a known option (did you mean host_failure_recovery_threads?)',
  );
});

test('an unknown option far from every known one gets no suggestion', () => {
  assert.is(failure({}, 'DEFAULT:\n  frobnicate: 2\n'), 'config: [DEFAULT] frobnicate is not a known option');
});

const NO_EFFECT = 'masakari.conf options with no effect in this operator, ignored: ';
const NO_EFFECT_END = ' (docs/configuration.md "Using an existing masakari.conf")';

test('masakari.conf options and groups without a role here are listed in one warning', () => {
  const { config, warnings } = load(
    {},
    'DEFAULT:\n  masakari_topic: ha_engine\n  osapi_max_limit: 10\ntaskflow:\n  connection: mysql://x\ncoordination:\n  backend_url: etcd3://x\n',
  );
  assert.is(config.DEFAULT.osapi_max_limit, 10);
  assert.equal(warnings, [
    `${NO_EFFECT}[DEFAULT] masakari_topic; [taskflow] connection; [coordination] backend_url${NO_EFFECT_END}`,
  ]);
});

test('masakari.conf DEFAULT options Masakari registers but never reads (session options) are accepted with a warning', () => {
  const { warnings } = load({}, 'DEFAULT:\n  fatal_exception_format_errors: true\n  timeout: 30\n  cafile: /etc/ssl/ca.pem\n');
  assert.equal(warnings, [`${NO_EFFECT}[DEFAULT] cafile, fatal_exception_format_errors, timeout${NO_EFFECT_END}`]);
});

test('a group that is not a map fails', () => {
  assert.is(failure({}, 'DEFAULT: 3\n'), `config: [DEFAULT] in ${FILE} must be a map of options`);
  assert.is(failure({}, '- a\n- b\n'), `config: ${FILE} must be a map of groups (DEFAULT, host_failure, ...)`);
});

test('invalid YAML and several documents fail naming the file', () => {
  assert.match(failure({}, 'DEFAULT:\n  a: [\n'), `config: ${FILE} is not valid YAML:`);
  assert.match(failure({}, 'DEFAULT:\n  a: 1\n  a: 2\n'), 'duplicated mapping key');
  assert.is(failure({}, 'DEFAULT: {}\n---\nDEFAULT: {}\n'), `config: ${FILE} must hold one YAML document, found 2`);
});

test('a missing MASAKARI_CONFIG file fails naming the path', () => {
  assert.match(
    failure({ MASAKARI_CONFIG: '/nowhere.yaml' }),
    'config: cannot read config file /nowhere.yaml: ENOENT',
  );
});

test('task lists accept a YAML map', () => {
  const { config } = load(
    {},
    `
taskflow_driver_recovery_flows:
  host_auto_failure_recovery_tasks:
    pre: [disable_compute_service_task, no_op]
    main: [prepare_HA_enabled_instances_task]
    post:
`,
  );
  assert.equal(config.taskflow_driver_recovery_flows.host_auto_failure_recovery_tasks, {
    pre: ['disable_compute_service_task', 'no_op'],
    main: ['prepare_HA_enabled_instances_task'],
    post: [],
  });
});

test("task lists accept Masakari's string form", () => {
  const { config } = load(
    {},
    `taskflow_driver_recovery_flows:\n  instance_failure_recovery_tasks: "pre:['stop_instance_task', 'no_op'],main:['start_instance_task'],post:[]"\n`,
  );
  assert.equal(config.taskflow_driver_recovery_flows.instance_failure_recovery_tasks, {
    pre: ['stop_instance_task', 'no_op'],
    main: ['start_instance_task'],
    post: [],
  });
});

test('task lists with a missing key or an unknown task fail naming the option', () => {
  assert.is(
    failure({}, 'taskflow_driver_recovery_flows:\n  process_failure_recovery_tasks: {pre: [], main: []}\n'),
    'config: [taskflow_driver_recovery_flows] process_failure_recovery_tasks must be a map with the keys pre, main and post, each a list of task names (post is missing), got {"pre":[],"main":[]}',
  );
  assert.match(
    failure({}, 'taskflow_driver_recovery_flows:\n  process_failure_recovery_tasks: {pre: [reboot_task], main: [], post: []}\n'),
    '[taskflow_driver_recovery_flows] process_failure_recovery_tasks must be a map with the keys pre, main and post, each a list of task names; "reboot_task" in pre is not a known task',
  );
});

test('MASAKARI__<GROUP>__<OPTION> overrides the file, case-insensitively', () => {
  const { config } = load(
    {
      MASAKARI__DEFAULT__HOST_FAILURE_RECOVERY_THREADS: '7',
      MASAKARI__host_failure__evacuate_all_instances: 'false',
      MASAKARI__TASKFLOW_DRIVER_RECOVERY_FLOWS__HOST_AUTO_FAILURE_RECOVERY_TASKS:
        "pre:['disable_compute_service_task'],main:[],post:['evacuate_instances_task']",
      MASAKARI__TASKFLOW_DRIVER_RECOVERY_FLOWS__INSTANCE_FAILURE_RECOVERY_TASKS:
        '{pre: [stop_instance_task], main: [start_instance_task], post: []}',
    },
    'DEFAULT:\n  host_failure_recovery_threads: 2\n',
  );
  assert.is(config.DEFAULT.host_failure_recovery_threads, 7);
  assert.is(config.host_failure.evacuate_all_instances, false);
  assert.equal(config.taskflow_driver_recovery_flows.host_auto_failure_recovery_tasks.main, []);
  assert.equal(config.taskflow_driver_recovery_flows.instance_failure_recovery_tasks.post, []);
});

test('a bad MASAKARI__ value fails naming the option and the variable', () => {
  assert.is(
    failure({ MASAKARI__DEFAULT__HOST_FAILURE_RECOVERY_THREADS: 'zero' }),
    'config: [DEFAULT] host_failure_recovery_threads must be an integer >= 1, got "zero" (set by MASAKARI__DEFAULT__HOST_FAILURE_RECOVERY_THREADS)',
  );
  assert.is(
    failure({ MASAKARI__DEFAULT__NO_SUCH_OPTION: '1' }),
    'config: [DEFAULT] no_such_option is not a known option (set by MASAKARI__DEFAULT__NO_SUCH_OPTION)',
  );
  assert.match(failure({ MASAKARI__NOPE__X: '1' }), 'MASAKARI__NOPE__X names group NOPE, which is not a known group');
  assert.is(failure({ MASAKARI__DEFAULT: '1' }), 'config: MASAKARI__DEFAULT must have the form MASAKARI__<GROUP>__<OPTION>');
});

test('MASAKARI__ for an ignored masakari.conf option only warns', () => {
  const { warnings } = load({ MASAKARI__DEFAULT__MASAKARI_TOPIC: 'x', MASAKARI__TASKFLOW__CONNECTION: 'y' });
  assert.equal(warnings, [`${NO_EFFECT}[DEFAULT] masakari_topic; [taskflow] connection${NO_EFFECT_END}`]);
});

test('dedicated variables set their options and win over the file and MASAKARI__', () => {
  const { config } = load(
    {
      MASAKARI_NAMESPACE: 'ha',
      MASAKARI_COMPONENTS: 'engine, remediation',
      MASAKARI_AUTH_STRATEGY: 'noauth2',
      MASAKARI_LISTEN: '127.0.0.1:25868',
      MASAKARI_METRICS_LISTEN: '0.0.0.0:9090',
      MASAKARI_POLICY_FILE: '/etc/masakari/policy.yaml',
      MASAKARI_LOG_LEVEL: 'debug',
      MASAKARI__OPERATOR__NAMESPACE: 'other',
    },
    'DEFAULT:\n  auth_strategy: keystone\n  masakari_api_listen_port: 1234\n',
  );
  assert.is(config.operator.namespace, 'ha');
  assert.equal(config.operator.components, ['engine', 'remediation']);
  assert.is(config.DEFAULT.auth_strategy, 'noauth2');
  assert.is(config.DEFAULT.masakari_api_listen, '127.0.0.1');
  assert.is(config.DEFAULT.masakari_api_listen_port, 25868);
  assert.is(config.operator.metrics_listen, '0.0.0.0:9090');
  assert.equal(metricsListenAddress(config), { host: '0.0.0.0', port: 9090 });
  assert.is(config.oslo_policy.policy_file, '/etc/masakari/policy.yaml');
  assert.is(config.operator.log_level, 'debug');
});

test('MASAKARI_LISTEN accepts a bracketed IPv6 address', () => {
  const { config } = load({ MASAKARI_LISTEN: '[::1]:15868' });
  assert.is(config.DEFAULT.masakari_api_listen, '::1');
  assert.is(config.DEFAULT.masakari_api_listen_port, 15868);
});

test('a malformed MASAKARI_LISTEN or MASAKARI_METRICS_LISTEN fails naming it', () => {
  assert.is(
    failure({ MASAKARI_LISTEN: '15868' }),
    'config: MASAKARI_LISTEN must be host:port with a port between 1 and 65535, got "15868"',
  );
  assert.is(
    failure({ MASAKARI_LISTEN: '0.0.0.0:0' }),
    'config: MASAKARI_LISTEN must be host:port with a port between 1 and 65535, got "0.0.0.0:0"',
  );
  assert.is(
    failure({ MASAKARI_METRICS_LISTEN: 'localhost' }),
    'config: [operator] metrics_listen must be host:port with a port between 1 and 65535, got "localhost" (set by MASAKARI_METRICS_LISTEN)',
  );
});

test('MASAKARI_COMPONENTS must name known components, each once, at least one', () => {
  assert.match(failure({ MASAKARI_COMPONENTS: 'api,scheduler' }), '[operator] components must be a non-empty comma-separated list of api, engine, remediation, detection, got "api,scheduler"');
  assert.match(failure({ MASAKARI_COMPONENTS: '' }), '[operator] components must be a non-empty comma-separated list');
  assert.match(failure({ MASAKARI_COMPONENTS: 'api,api' }), 'each named once');
});

test('MASAKARI_NAMESPACE must be a namespace name', () => {
  assert.is(
    failure({ MASAKARI_NAMESPACE: 'Masakari_NS' }),
    'config: [operator] namespace must be a Kubernetes namespace name (DNS-1123 label), got "Masakari_NS" (set by MASAKARI_NAMESPACE)',
  );
});

test('nova_api_version must be 2.53 or later', () => {
  assert.match(failure({}, 'operator:\n  nova_api_version: "2.1"\n'), '[operator] nova_api_version must be a Nova microversion 2.53 or later');
  assert.is(load({}, 'operator:\n  nova_api_version: "2.95"\n').config.operator.nova_api_version, '2.95');
  assert.is(load({}, 'operator:\n  nova_api_version: "2.100"\n').config.operator.nova_api_version, '2.100');
});

test('leader-election timings must nest: retry_period < renew_deadline < lease_duration', () => {
  assert.is(
    failure({}, 'operator:\n  lease_duration: 10\n  renew_deadline: 10\n'),
    'config: [operator] renew_deadline must be less than lease_duration (10), got 10',
  );
  assert.is(
    failure({}, 'operator:\n  retry_period: 10\n'),
    'config: [operator] retry_period must be less than renew_deadline (10), got 10',
  );
});


test('skip_servers_with_name takes a YAML list or one pattern per line, and fails on an invalid pattern', () => {
  const fromFile = load({}, "host_failure:\n  skip_servers_with_name: ['^test-', 'a{1,3}$']\n").config;
  assert.equal(
    fromFile.host_failure.skip_servers_with_name.map((r) => r.source),
    ['^test-', 'a{1,3}$'],
  );
  const fromEnv = load({ MASAKARI__HOST_FAILURE__SKIP_SERVERS_WITH_NAME: '^test-\n^tmp-' }).config;
  assert.equal(
    fromEnv.host_failure.skip_servers_with_name.map((r) => r.source),
    ['^test-', '^tmp-'],
  );
  assert.match(
    failure({}, "host_failure:\n  skip_servers_with_name: ['(unclosed']\n"),
    "[host_failure] skip_servers_with_name must be a list of regular expressions (a YAML list, or one per line); '(unclosed' is not one",
  );
});

/** Loads config files (path → text) given as --config-file arguments, in order. */
function loadFiles(files: Record<string, string>, env: Record<string, string> = {}) {
  return loadConfig({
    env,
    files: Object.keys(files),
    readFile: (path) => {
      const text = files[path];
      if (text === undefined) throw new Error(`ENOENT: no such file, open '${path}'`);
      return text;
    },
  });
}

const filesFailure = (files: Record<string, string>): string => thrown(() => loadFiles(files), ConfigError).message;

const CONF = '/etc/masakari/masakari.conf';

test('a masakari.conf (INI) sets options with oslo.config semantics', () => {
  const { config, files, warnings } = loadFiles({
    [CONF]: [
      '[DEFAULT]',
      'host_failure_recovery_threads = 5',
      'nova_api_insecure = On',
      'os_region_name = RegionTwo',
      '[host_failure]',
      'evacuate_all_instances = NO',
      'skip_servers_with_name = ^test-',
      '    ^scratch-',
      '[taskflow_driver_recovery_flows]',
      "host_auto_failure_recovery_tasks = pre:['disable_compute_service_task'],main:['prepare_HA_enabled_instances_task'],post:[]",
      '[operator]',
      'components = api, engine',
    ].join('\n'),
  });
  assert.equal(files, [CONF]);
  assert.equal(warnings, []);
  assert.is(config.DEFAULT.host_failure_recovery_threads, 5);
  assert.is(config.DEFAULT.nova_api_insecure, true);
  assert.is(config.DEFAULT.os_region_name, 'RegionTwo');
  assert.is(config.host_failure.evacuate_all_instances, false);
  assert.equal(config.host_failure.skip_servers_with_name.map(String), ['/^test-/', '/^scratch-/']);
  assert.equal(config.taskflow_driver_recovery_flows.host_auto_failure_recovery_tasks, {
    pre: ['disable_compute_service_task'],
    main: ['prepare_HA_enabled_instances_task'],
    post: [],
  });
  assert.equal(config.operator.components, ['api', 'engine']);
});

test('the expiry and periodic intervals of a masakari.conf take effect', () => {
  const { config } = loadFiles({
    [CONF]: '[DEFAULT]\ncheck_expired_notifications_interval = 300\nnotifications_expired_interval = 3600\nprocess_unfinished_notifications_interval = 60\nretry_notification_new_status_interval = 30\n',
  });
  assert.is(config.DEFAULT.check_expired_notifications_interval, 300);
  assert.is(config.DEFAULT.notifications_expired_interval, 3600);
  assert.is(config.DEFAULT.process_unfinished_notifications_interval, 60);
  assert.is(config.DEFAULT.retry_notification_new_status_interval, 30);
});

test('INI or YAML is told by extension, else by a first [group] line', () => {
  const yaml = 'DEFAULT:\n  osapi_max_limit: 7\n';
  assert.is(loadFiles({ '/etc/op/config.yaml': yaml }).config.DEFAULT.osapi_max_limit, 7);
  assert.is(loadFiles({ '/etc/op/config': yaml }).config.DEFAULT.osapi_max_limit, 7);
  assert.is(loadFiles({ '/etc/op/config': '# site file\n[DEFAULT]\nosapi_max_limit = 8\n' }).config.DEFAULT.osapi_max_limit, 8);
  assert.is(loadFiles({ '/etc/op/a.ini': '[DEFAULT]\nosapi_max_limit = 9\n' }).config.DEFAULT.osapi_max_limit, 9);
});

test('repeated --config-file: later files override, MASAKARI_CONFIG is read first, variables win over all', () => {
  const { config, files } = loadFiles(
    {
      '/etc/op/base.yaml': 'DEFAULT:\n  osapi_max_limit: 5\n  host_failure_recovery_threads: 2\n',
      [CONF]: '[DEFAULT]\nosapi_max_limit = 6\nverify_interval = 4\n',
      '/etc/masakari/masakari.conf.d/site.conf': '[DEFAULT]\nverify_interval = 3\n',
    },
    { MASAKARI__DEFAULT__HOST_FAILURE_RECOVERY_THREADS: '9' },
  );
  assert.equal(files, ['/etc/op/base.yaml', CONF, '/etc/masakari/masakari.conf.d/site.conf']);
  assert.is(config.DEFAULT.osapi_max_limit, 6);
  assert.is(config.DEFAULT.verify_interval, 3);
  assert.is(config.DEFAULT.host_failure_recovery_threads, 9);
});

test('$references are substituted in the values that take effect', () => {
  const { config } = loadFiles({
    [CONF]: '[DEFAULT]\nregion = RegionNine\nos_region_name = $region\nservice_disable_reason = costs $$5\n[host_failure]\nservice_disable_reason = ${DEFAULT.os_region_name} down\n',
  });
  assert.is(config.DEFAULT.os_region_name, 'RegionNine');
  assert.is(config.host_failure.service_disable_reason, 'RegionNine down');
});

test('a syntax error in a masakari.conf names the file and line', () => {
  assert.is(
    filesFailure({ [CONF]: '[DEFAULT]\ndebug = true\nthis is not an option line\n' }),
    `config: ${CONF}:3: expected "name = value", got "this is not an option line" (not a valid masakari.conf)`,
  );
});

test('a bad value in a masakari.conf names the option, the value and the line', () => {
  assert.is(
    filesFailure({ [CONF]: '[DEFAULT]\n\nhost_failure_recovery_threads = zero\n' }),
    `config: [DEFAULT] host_failure_recovery_threads must be an integer >= 1, got "zero" (at ${CONF}:3)`,
  );
});

test('[host_failure] evacuate_all_instance: a misspelt option gets the nearest known name, and is ignored as oslo.config ignores it', () => {
  const { config, warnings } = loadFiles({ [CONF]: '[host_failure]\nevacuate_all_instance = false\n' });
  assert.is(config.host_failure.evacuate_all_instances, true);
  assert.equal(warnings, [
    `[host_failure] evacuate_all_instance: unknown option; did you mean evacuate_all_instances? (${CONF}:2); ignored, as oslo.config ignores it`,
  ]);
});

test('a swapped pair of letters counts as one edit (Damerau) when choosing the nearest name', () => {
  const { warnings } = loadFiles({ [CONF]: '[keystone_authtoken]\nmemcahced_servers = a:11211\n' });
  assert.match(warnings[0]!, 'memcahced_servers: unknown option; did you mean memcached_servers?');
});

test('a misspelt group gets the nearest known group, and its options are ignored', () => {
  const { warnings } = loadFiles({ [CONF]: '[DEFAULT]\n[host_failur]\nevacuate_all_instances = false\n' });
  assert.equal(warnings, [
    `[host_failur]: unknown group; did you mean host_failure? (${CONF}:3); its options are ignored, as oslo.config ignores them`,
  ]);
});

test("an unknown option in the operator's own [operator] group still stops the process", () => {
  assert.is(
    filesFailure({ [CONF]: '[operator]\nnamespce = ha\n' }),
    `config: [operator] namespce is not a known option (did you mean namespace?) (at ${CONF}:2)`,
  );
});

test('options of Masakari and its libraries that have no effect here are named in one warning, grouped', () => {
  const { warnings } = loadFiles({
    [CONF]: [
      '[DEFAULT]',
      'transport_url = rabbit://u:p@h:5672/',
      'log_dir = /var/log/masakari',
      'masakari_api_workers = 4',
      '[oslo_messaging_rabbit]',
      'rabbit_quorum_queue = true',
      '[oslo_concurrency]',
      'lock_path = $state_path/tmp',
      '[oslo_policy]',
      'enforce_scope = true',
      'enforce_new_defaults = true',
      '[keystone_authtoken]',
      'memcached_servers = m:11211',
    ].join('\n'),
  });
  assert.equal(warnings, [
    `${NO_EFFECT}[DEFAULT] log_dir, masakari_api_workers, transport_url; [oslo_messaging_rabbit] rabbit_quorum_queue; [oslo_concurrency] lock_path; [oslo_policy] enforce_new_defaults, enforce_scope; [keystone_authtoken] memcached_servers${NO_EFFECT_END}`,
  ]);
});

test('debug = true sets the log level to debug, unless log_level is set', () => {
  assert.is(loadFiles({ [CONF]: '[DEFAULT]\ndebug = True\n' }).config.operator.log_level, 'debug');
  assert.is(loadFiles({ [CONF]: '[DEFAULT]\ndebug = False\n' }).config.operator.log_level, 'info');
  assert.is(
    loadFiles({ [CONF]: '[DEFAULT]\ndebug = True\n' }, { MASAKARI_LOG_LEVEL: 'warn' }).config.operator.log_level,
    'warn',
  );
  assert.is(loadFiles({ [CONF]: '[DEFAULT]\ndebug = yes\n[operator]\nlog_level = error\n' }).config.operator.log_level, 'error');
});

test('enable_proxy_headers_parsing and osapi_masakari_link_prefix are carried in the config', () => {
  const { config, warnings } = loadFiles({
    [CONF]: '[DEFAULT]\nosapi_masakari_link_prefix = https://ha.example.com/instance-ha\n[oslo_middleware]\nenable_proxy_headers_parsing = true\n',
  });
  assert.equal(warnings, []);
  assert.is(config.oslo_middleware.enable_proxy_headers_parsing, true);
  assert.is(config.DEFAULT.osapi_masakari_link_prefix, 'https://ha.example.com/instance-ha');
});

test("a masakari.conf's TLS options ([DEFAULT] use_ssl, [wsgi] ssl_*) are applied; [wsgi] api_paste_config and [ssl] only warned", () => {
  const { config, warnings } = loadFiles({
    [CONF]:
      '[DEFAULT]\nuse_ssl = true\n[wsgi]\napi_paste_config = /etc/masakari/api-paste.ini\n' +
      'ssl_cert_file = /etc/masakari/certs/masakari.crt\nssl_key_file = /etc/masakari/certs/masakari.key\n' +
      'ssl_ca_file = /etc/masakari/certs/ca.crt\n[ssl]\nca_file = /etc/ssl/ca.crt\n',
  });
  assert.is(config.DEFAULT.use_ssl, true);
  assert.equal(config.wsgi, {
    ssl_cert_file: '/etc/masakari/certs/masakari.crt',
    ssl_key_file: '/etc/masakari/certs/masakari.key',
    ssl_ca_file: '/etc/masakari/certs/ca.crt',
  });
  assert.equal(warnings, [`${NO_EFFECT}[wsgi] api_paste_config; [ssl] ca_file${NO_EFFECT_END}`]);
});

test('the --debug argument overrides a masakari.conf debug = false, as oslo.config puts the command line over files', () => {
  const files: Record<string, string> = { [CONF]: '[DEFAULT]\ndebug = false\n' };
  const { config } = loadConfig({ env: {}, files: [CONF], debug: true, readFile: (path) => files[path]! });
  assert.is(config.DEFAULT.debug, true);
  assert.is(config.operator.log_level, 'debug');
  const explicit = loadConfig({ env: { MASAKARI_LOG_LEVEL: 'warn' }, debug: true });
  assert.is(explicit.config.operator.log_level, 'warn');
});

test.run();
