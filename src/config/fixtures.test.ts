// The masakari.conf files devstack, kolla-ansible and openstack-helm generate
// (testdata/README.md) load unchanged, and the options with an effect here
// take it. test/integration/shell/process.test.ts starts the process on them.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from './load.ts';
import { resolveOpenStackCredentials } from './openstack-auth.ts';

const FIXTURES = ['devstack', 'kolla-ansible', 'openstack-helm'] as const;

function fixturePath(name: (typeof FIXTURES)[number]): string {
  return fileURLToPath(new URL(`./testdata/${name}.masakari.conf`, import.meta.url));
}

function load(name: (typeof FIXTURES)[number], extra: Record<string, string> = {}) {
  const path = fixturePath(name);
  return loadConfig({
    env: {},
    files: [path, ...Object.keys(extra)],
    readFile: (p) => (p === path ? readFileSync(p, 'utf8') : extra[p]!),
  });
}

function credentials(config: ReturnType<typeof load>['config']) {
  return resolveOpenStackCredentials(config, { env: {}, cwd: '/nowhere', home: '/nowhere', readFile: () => undefined });
}

/** The Nova credentials the file gives, checked to come from `source`. */
function credentialsFrom(config: ReturnType<typeof load>['config'], source: string) {
  const creds = credentials(config);
  assert.is(creds?.source, source);
  return creds!;
}

for (const name of FIXTURES) {
  test(`the ${name} masakari.conf loads unchanged, its OpenStack credentials resolve, options without effect are one warning`, () => {
    const { config, warnings } = load(name);
    assert.ok(credentials(config));
    assert.match(warnings[0]!, /^masakari\.conf options with no effect in this operator, ignored: \[DEFAULT\] /);
    for (const w of warnings.slice(1)) assert.match(w, /unknown option; .*ignored, as oslo\.config ignores it$|unknown option \(/);
  });
}

test('devstack: debug, the Nova service user and keystone_authtoken interface take effect', () => {
  const { config, warnings } = load('devstack');
  assert.is(config.operator.log_level, 'debug');
  assert.is(config.keystone_authtoken.interface, 'public');
  assert.is(config.keystone_authtoken.cafile, '/opt/stack/data/ca-bundle.pem');
  const creds = credentialsFrom(config, '[DEFAULT] os_privileged_user_* options');
  assert.is(creds.auth_url, 'http://10.0.0.20/identity');
  assert.equal(warnings.length, 1, 'every option devstack writes is known');
  assert.match(warnings[0]!, 'logging_context_format_string');
  assert.match(warnings[0]!, '[database] connection');
  assert.match(warnings[0]!, '[keystone_authtoken] memcached_servers');
});

test('kolla-ansible: debug, listen address, proxy headers, keystone_authtoken and the Nova user take effect', () => {
  const { config, warnings } = load('kolla-ansible');
  assert.is(config.operator.log_level, 'debug');
  assert.is(config.DEFAULT.masakari_api_listen, '10.0.0.11');
  assert.is(config.DEFAULT.masakari_api_listen_port, 15868);
  assert.is(config.DEFAULT.nova_ca_certificates_file, null, 'an empty value is unset');
  assert.is(config.oslo_middleware.enable_proxy_headers_parsing, true);
  assert.is(config.keystone_authtoken.www_authenticate_uri, 'https://openstack.example.com:5000');
  assert.is(config.keystone_authtoken.region_name, 'RegionOne');
  assert.is(config.keystone_authtoken.username, 'masakari');
  const creds = credentialsFrom(config, '[DEFAULT] os_privileged_user_* options');
  assert.is(creds.region_name, 'RegionOne');
  // enabled_apis is nova's option; Masakari 22 does not register it, so oslo.config ignores it too.
  assert.equal(warnings.slice(1), [
    `[DEFAULT] enabled_apis: unknown option (${fixturePath('kolla-ansible')}:6); ignored, as oslo.config ignores it`,
  ]);
  for (const option of ['transport_url', 'log_dir', 'state_path', 'memcached_servers', 'heartbeat_in_pthread', 'lock_path', 'backend_url']) {
    assert.match(warnings[0]!, option);
  }
});

test('openstack-helm: Masakari options and keystone_authtoken take effect', () => {
  const { config, warnings } = load('openstack-helm');
  assert.is(config.operator.log_level, 'info');
  assert.is(config.DEFAULT.host_failure_recovery_threads, 1);
  assert.is(config.DEFAULT.os_user_domain_name, 'service');
  assert.is(config.keystone_authtoken.auth_url, 'http://keystone-api.openstack.svc.cluster.local:5000/v3');
  assert.equal(warnings.length, 1, 'every option openstack-helm writes is known');
  assert.match(warnings[0]!, '[wsgi] api_paste_config');
});

test('[keystone_authtoken] credentials validate tokens when no other credentials are given', () => {
  const conf = '/etc/masakari/no-privileged-user.conf';
  const { config } = loadConfig({
    env: {},
    files: [conf],
    readFile: () =>
      readFileSync(fixturePath('openstack-helm'), 'utf8').replace(/^os_privileged_user_.*$/gm, ''),
  });
  const creds = credentialsFrom(config, '[keystone_authtoken] options');
  assert.is(creds.auth_url, 'http://keystone-api.openstack.svc.cluster.local:5000/v3');
  assert.equal(
    { ...creds, password: creds.auth_type === 'password' ? creds.password : undefined },
    {
      auth_type: 'password',
      username: 'masakari',
      password: 'password',
      user_domain_name: 'service',
      project_name: 'service',
      project_domain_name: 'service',
      auth_url: 'http://keystone-api.openstack.svc.cluster.local:5000/v3',
      region_name: 'RegionOne',
      interface: null,
      cacert: null,
      insecure: false,
      source: '[keystone_authtoken] options',
    },
  );
});

test.run();
