import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { OpenStackCredentials as ResolvedByConfig } from '../config/openstack-auth.ts';
import type { OpenStackCredentials } from './credentials.ts';
import { isApplicationCredentials } from './credentials.ts';

// Compile-time guard: what the config loader resolves is accepted by the client as is.
const accepts = (c: ResolvedByConfig): OpenStackCredentials => c;

test('credentials resolved by the config loader are accepted by the client', () => {
  const fromConfig: ResolvedByConfig = {
    auth_type: 'password',
    auth_url: 'http://keystone/v3',
    username: 'masakari',
    password: 'pw',
    user_domain_id: 'default',
    project_name: 'service',
    project_domain_id: 'default',
    region_name: 'RegionOne',
    interface: null,
    cacert: null,
    insecure: false,
    source: 'test',
  };
  assert.is(accepts(fromConfig).auth_url, 'http://keystone/v3');
});

test('application credentials are recognised by auth_type or by their secret', () => {
  assert.ok(
    isApplicationCredentials({ auth_url: 'x', application_credential_secret: 's', application_credential_id: 'i' }),
  );
  assert.ok(
    isApplicationCredentials({
      auth_url: 'x',
      auth_type: 'v3applicationcredential',
      application_credential_secret: 's',
    }),
  );
  assert.not.ok(isApplicationCredentials({ auth_url: 'x', username: 'u', password: 'p' }));
});

test.run();
