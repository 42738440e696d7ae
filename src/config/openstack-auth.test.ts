import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { thrown } from '../testing/expect-error.ts';
import { loadConfig } from './load.ts';
import { OpenStackAuthError, resolveOpenStackCredentials } from './openstack-auth.ts';

const HOME = '/home/op';
const CWD = '/srv/op';

function configWith(env: Record<string, string> = {}) {
  return loadConfig({ env }).config;
}

/** Resolves with the given variables, files (path → text) and masakari options (MASAKARI__ form). */
function resolve(env: Record<string, string>, files: Record<string, string> = {}, options: Record<string, string> = {}) {
  return resolveOpenStackCredentials(configWith(options), {
    env,
    cwd: CWD,
    home: HOME,
    readFile: (path) => files[path],
  });
}

const failure = (env: Record<string, string>, files: Record<string, string> = {}, options: Record<string, string> = {}) =>
  thrown(() => resolve(env, files, options), OpenStackAuthError).message;

const OPENRC = {
  OS_AUTH_URL: 'https://keystone.example:5000/v3',
  OS_USERNAME: 'masakari',
  OS_PASSWORD: 's3cret',
  OS_PROJECT_NAME: 'service',
  OS_USER_DOMAIN_NAME: 'Default',
  OS_PROJECT_DOMAIN_NAME: 'Default',
};

test('no OS_CLOUD, no OS_AUTH_URL and no os_privileged_user_* → no credentials', () => {
  assert.is(resolve({}), undefined);
});

test('OS_* variables give password credentials', () => {
  assert.equal(resolve({ ...OPENRC, OS_REGION_NAME: 'RegionOne', OS_INTERFACE: 'internal', OS_CACERT: '/ca.pem' }), {
    auth_type: 'password',
    username: 'masakari',
    password: 's3cret',
    user_domain_name: 'Default',
    project_name: 'service',
    project_domain_name: 'Default',
    auth_url: 'https://keystone.example:5000/v3',
    region_name: 'RegionOne',
    interface: 'internal',
    cacert: '/ca.pem',
    insecure: false,
    source: 'OS_* environment variables',
  });
});

test('OS_* without domains scopes to the default domain by id', () => {
  const creds = resolve({ OS_AUTH_URL: 'http://k:5000', OS_USERNAME: 'u', OS_PASSWORD: 'p', OS_TENANT_NAME: 'service' });
  assert.equal(creds, {
    auth_type: 'password',
    username: 'u',
    password: 'p',
    user_domain_id: 'default',
    project_name: 'service',
    project_domain_id: 'default',
    auth_url: 'http://k:5000',
    region_name: null,
    interface: null,
    cacert: null,
    insecure: false,
    source: 'OS_* environment variables',
  });
});

test('OS_PROJECT_ID scopes by id', () => {
  const creds = resolve({ OS_AUTH_URL: 'http://k:5000', OS_USERNAME: 'u', OS_PASSWORD: 'p', OS_PROJECT_ID: 'abc' });
  assert.is(creds?.auth_type === 'password' && creds.project_id, 'abc');
  assert.is(creds?.auth_type === 'password' && creds.project_name, undefined);
});

test('masakari.conf options fill region, CA and insecure when OS_* leave them out', () => {
  const creds = resolve(OPENRC, {}, {
    MASAKARI__DEFAULT__OS_REGION_NAME: 'RegionTwo',
    MASAKARI__DEFAULT__NOVA_CA_CERTIFICATES_FILE: '/etc/ssl/nova.pem',
    MASAKARI__DEFAULT__NOVA_API_INSECURE: 'true',
  });
  assert.is(creds?.region_name, 'RegionTwo');
  assert.is(creds?.cacert, '/etc/ssl/nova.pem');
  assert.is(creds?.insecure, true);
  assert.is(creds?.interface, null, 'no interface given: nova_catalog_admin_info decides');
});

test('OS_INSECURE and OS_ENDPOINT_TYPE are honoured, bad values fail naming the variable', () => {
  const creds = resolve({ ...OPENRC, OS_INSECURE: 'True', OS_ENDPOINT_TYPE: 'adminURL' });
  assert.is(creds?.insecure, true);
  assert.is(creds?.interface, 'admin');
  assert.is(
    failure({ ...OPENRC, OS_INSECURE: 'sometimes' }),
    'openstack credentials: OS_INSECURE must be true or false, got "sometimes"',
  );
  assert.is(
    failure({ ...OPENRC, OS_INTERFACE: 'private' }),
    'openstack credentials: OS_INTERFACE must be public, internal or admin, got "private"',
  );
});

test('missing OS_* pieces fail naming the variable', () => {
  assert.is(
    failure({ OS_AUTH_URL: 'http://k:5000', OS_USERNAME: 'u', OS_PROJECT_NAME: 'p' }),
    'openstack credentials: OS_PASSWORD is required for password authentication',
  );
  assert.is(
    failure({ OS_AUTH_URL: 'http://k:5000', OS_USERNAME: 'u', OS_PASSWORD: 'p' }),
    'openstack credentials: OS_PROJECT_NAME or OS_PROJECT_ID is required for password authentication',
  );
  assert.is(
    failure({ OS_AUTH_URL: 'http://k:5000', OS_AUTH_TYPE: 'token', OS_TOKEN: 't' }),
    'openstack credentials: OS_AUTH_TYPE must be password, v3password or v3applicationcredential, got "token"',
  );
});

test('an OS_AUTH_URL that is not an http(s) URL fails naming its source', () => {
  assert.is(
    failure({ ...OPENRC, OS_AUTH_URL: 'keystone:5000' }),
    'openstack credentials: auth_url from OS_* environment variables must be an http(s) URL, got "keystone:5000"',
  );
});

test('credentials without OS_AUTH_URL fail instead of silently running without Nova', () => {
  assert.is(
    failure({ OS_USERNAME: 'u', OS_PASSWORD: 'p' }),
    'openstack credentials: OS_USERNAME, OS_PASSWORD set but OS_AUTH_URL (or OS_CLOUD) is not',
  );
});

test('application credentials by id need no project', () => {
  const creds = resolve({
    OS_AUTH_TYPE: 'v3applicationcredential',
    OS_AUTH_URL: 'http://k:5000/v3',
    OS_APPLICATION_CREDENTIAL_ID: 'ac-id',
    OS_APPLICATION_CREDENTIAL_SECRET: 'ac-secret',
  });
  assert.equal(creds, {
    auth_type: 'v3applicationcredential',
    application_credential_secret: 'ac-secret',
    application_credential_id: 'ac-id',
    auth_url: 'http://k:5000/v3',
    region_name: null,
    interface: null,
    cacert: null,
    insecure: false,
    source: 'OS_* environment variables',
  });
});

test('application credentials by name need the user', () => {
  const creds = resolve({
    OS_AUTH_URL: 'http://k:5000/v3',
    OS_APPLICATION_CREDENTIAL_NAME: 'masakari',
    OS_APPLICATION_CREDENTIAL_SECRET: 'ac-secret',
    OS_USERNAME: 'svc',
    OS_USER_DOMAIN_NAME: 'Default',
  });
  assert.is(creds?.auth_type, 'v3applicationcredential');
  assert.is(creds?.auth_type === 'v3applicationcredential' && creds.application_credential_name, 'masakari');
  assert.is(creds?.username, 'svc');
  assert.is(creds?.user_domain_name, 'Default');
  assert.is(
    failure({
      OS_AUTH_URL: 'http://k:5000/v3',
      OS_AUTH_TYPE: 'v3applicationcredential',
      OS_APPLICATION_CREDENTIAL_SECRET: 's',
    }),
    'openstack credentials: OS_APPLICATION_CREDENTIAL_ID or OS_APPLICATION_CREDENTIAL_NAME is required for v3applicationcredential authentication',
  );
});

const CLOUDS = `
clouds:
  prod:
    auth:
      auth_url: https://keystone.prod:5000/v3
      username: masakari
      project_name: service
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    interface: internal
    verify: false
  lab:
    auth_type: v3applicationcredential
    auth:
      auth_url: http://lab:5000/v3
      application_credential_id: lab-id
      application_credential_secret: lab-secret
    cacert: /etc/lab-ca.pem
`;

test('OS_CLOUD reads the cloud from ./clouds.yaml and its secrets from secure.yaml', () => {
  const creds = resolve(
    { OS_CLOUD: 'prod' },
    {
      [`${CWD}/clouds.yaml`]: CLOUDS,
      [`${HOME}/.config/openstack/secure.yaml`]: 'clouds:\n  prod:\n    auth:\n      password: from-secure\n',
    },
  );
  assert.equal(creds, {
    auth_type: 'password',
    username: 'masakari',
    password: 'from-secure',
    user_domain_name: 'Default',
    project_name: 'service',
    project_domain_name: 'Default',
    auth_url: 'https://keystone.prod:5000/v3',
    region_name: 'RegionOne',
    interface: 'internal',
    cacert: null,
    insecure: true,
    source: `cloud prod in ${CWD}/clouds.yaml (secrets from ${HOME}/.config/openstack/secure.yaml)`,
  });
});

test('OS_CLOUD wins over OS_* variables, and application credentials work from clouds.yaml', () => {
  const creds = resolve({ OS_CLOUD: 'lab', ...OPENRC }, { '/etc/openstack/clouds.yaml': CLOUDS });
  assert.is(creds?.auth_type, 'v3applicationcredential');
  assert.is(creds?.auth_type === 'v3applicationcredential' && creds.application_credential_id, 'lab-id');
  assert.is(creds?.auth_type === 'v3applicationcredential' && creds.application_credential_secret, 'lab-secret');
  assert.is(creds?.cacert, '/etc/lab-ca.pem');
  assert.is(creds?.interface, null);
  assert.is(creds?.source, 'cloud lab in /etc/openstack/clouds.yaml');
});

test('clouds.yaml search order: OS_CLIENT_CONFIG_FILE, ./, ~/.config/openstack/, /etc/openstack/', () => {
  const files = {
    '/custom/clouds.yaml': 'clouds:\n  c:\n    auth: {auth_url: "http://custom", username: u, password: p, project_id: x}\n',
    [`${CWD}/clouds.yaml`]: 'clouds:\n  c:\n    auth: {auth_url: "http://cwd", username: u, password: p, project_id: x}\n',
    [`${HOME}/.config/openstack/clouds.yaml`]:
      'clouds:\n  c:\n    auth: {auth_url: "http://home", username: u, password: p, project_id: x}\n',
    '/etc/openstack/clouds.yaml': 'clouds:\n  c:\n    auth: {auth_url: "http://etc", username: u, password: p, project_id: x}\n',
  };
  const pick = (omit: string[], extra: Record<string, string> = {}) =>
    resolve(
      { OS_CLOUD: 'c', ...extra },
      Object.fromEntries(Object.entries(files).filter(([p]) => !omit.includes(p))),
    )?.auth_url;
  assert.is(pick([], { OS_CLIENT_CONFIG_FILE: '/custom/clouds.yaml' }), 'http://custom');
  assert.is(pick([]), 'http://cwd');
  assert.is(pick([`${CWD}/clouds.yaml`]), 'http://home');
  assert.is(pick([`${CWD}/clouds.yaml`, `${HOME}/.config/openstack/clouds.yaml`]), 'http://etc');
});

test('OS_CLOUD naming a missing cloud or file fails with where it looked', () => {
  assert.is(
    failure({ OS_CLOUD: 'nope' }, { [`${CWD}/clouds.yaml`]: CLOUDS }),
    `openstack credentials: OS_CLOUD=nope: no such cloud in ${CWD}/clouds.yaml (clouds: prod, lab)`,
  );
  assert.is(
    failure({ OS_CLOUD: 'prod' }),
    `openstack credentials: OS_CLOUD=prod but no clouds.yaml found (looked in ${CWD}/clouds.yaml, ${HOME}/.config/openstack/clouds.yaml, /etc/openstack/clouds.yaml)`,
  );
  assert.is(
    failure({ OS_CLOUD: 'prod' }, { [`${CWD}/clouds.yaml`]: CLOUDS }),
    'openstack credentials: cloud prod auth.password is required for password authentication',
  );
  assert.match(failure({ OS_CLOUD: 'x' }, { [`${CWD}/clouds.yaml`]: 'clouds: [' }), 'is not valid YAML');
});

test('os_privileged_user_* options are the last resort, with Masakari domain "default" sent as the id', () => {
  const creds = resolve({}, {}, {
    MASAKARI__DEFAULT__OS_PRIVILEGED_USER_AUTH_URL: 'http://keystone:5000/v3',
    MASAKARI__DEFAULT__OS_PRIVILEGED_USER_NAME: 'nova',
    MASAKARI__DEFAULT__OS_PRIVILEGED_USER_PASSWORD: 'pw',
    MASAKARI__DEFAULT__OS_PRIVILEGED_USER_TENANT: 'service',
    MASAKARI__DEFAULT__OS_PROJECT_DOMAIN_NAME: 'Services',
    MASAKARI__DEFAULT__OS_REGION_NAME: 'RegionOne',
  });
  assert.equal(creds, {
    auth_type: 'password',
    username: 'nova',
    password: 'pw',
    user_domain_id: 'default',
    project_name: 'service',
    project_domain_name: 'Services',
    auth_url: 'http://keystone:5000/v3',
    region_name: 'RegionOne',
    interface: null,
    cacert: null,
    insecure: false,
    source: '[DEFAULT] os_privileged_user_* options',
  });
});

test('incomplete os_privileged_user_* options fail naming the missing ones', () => {
  assert.is(
    failure({}, {}, { MASAKARI__DEFAULT__OS_PRIVILEGED_USER_NAME: 'nova' }),
    'openstack credentials: [DEFAULT] os_privileged_user_auth_url, os_privileged_user_password, os_privileged_user_tenant must be set when any os_privileged_user_* option is',
  );
});

test('os_system_scope asks for a system-scoped token, without a tenant; both at once fail', () => {
  const base = {
    MASAKARI__DEFAULT__OS_PRIVILEGED_USER_AUTH_URL: 'http://keystone:5000/v3',
    MASAKARI__DEFAULT__OS_PRIVILEGED_USER_NAME: 'nova',
    MASAKARI__DEFAULT__OS_PRIVILEGED_USER_PASSWORD: 'pw',
    MASAKARI__DEFAULT__OS_SYSTEM_SCOPE: 'all',
  };
  const creds = resolve({}, {}, base);
  assert.is((creds as { system_scope?: string }).system_scope, 'all');
  assert.is((creds as { project_name?: string }).project_name, undefined);
  assert.is(
    failure({}, {}, { ...base, MASAKARI__DEFAULT__OS_PRIVILEGED_USER_TENANT: 'service' }),
    'openstack credentials: [DEFAULT] os_system_scope and os_privileged_user_tenant are both set: a token is scoped to the system or to a project, not both',
  );
});

test('[keystone_authtoken] credentials that are incomplete stop the process naming what is missing', () => {
  assert.is(
    failure({}, {}, { MASAKARI__KEYSTONE_AUTHTOKEN__AUTH_TYPE: 'password', MASAKARI__KEYSTONE_AUTHTOKEN__USERNAME: 'masakari' }),
    "openstack credentials: [keystone_authtoken] auth_url, password, project_name must be set when its credentials are the operator's (auth_type password)",
  );
});

test('os_privileged_user_* win over [keystone_authtoken] credentials, as the Nova user', () => {
  const creds = resolve(
    {},
    {},
    {
      MASAKARI__DEFAULT__OS_PRIVILEGED_USER_AUTH_URL: 'https://keystone.example:5000/v3',
      MASAKARI__DEFAULT__OS_PRIVILEGED_USER_NAME: 'nova',
      MASAKARI__DEFAULT__OS_PRIVILEGED_USER_PASSWORD: 'n',
      MASAKARI__DEFAULT__OS_PRIVILEGED_USER_TENANT: 'service',
      MASAKARI__KEYSTONE_AUTHTOKEN__AUTH_TYPE: 'password',
      MASAKARI__KEYSTONE_AUTHTOKEN__USERNAME: 'masakari',
    },
  );
  assert.is(creds?.source, '[DEFAULT] os_privileged_user_* options');
});

test.run();
