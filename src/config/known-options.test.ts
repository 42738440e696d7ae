import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KNOWN_OPTIONS } from './known-options.ts';
import { OPTIONS, type GroupName } from './options.ts';

test("every option of the table that is Masakari's or a library's is in the generated registry, under the same group", () => {
  const missing: string[] = [];
  for (const group of Object.keys(OPTIONS) as GroupName[]) {
    if (group === 'operator') continue;
    for (const [option, spec] of Object.entries(OPTIONS[group])) {
      const extension = (spec as { help: string }).help.startsWith('OpenKeel extension');
      if (!extension && !KNOWN_OPTIONS[group]?.[option]) missing.push(`[${group}] ${option}`);
    }
  }
  assert.equal(missing, []);
});

test('the registry holds the libraries a masakari.conf carries', () => {
  for (const [group, option] of [
    ['DEFAULT', 'transport_url'],
    ['DEFAULT', 'debug'],
    ['DEFAULT', 'log_dir'],
    ['keystone_authtoken', 'memcached_servers'],
    ['keystone_authtoken', 'auth_url'],
    ['keystone_authtoken', 'service_token_roles_required'],
    ['oslo_messaging_rabbit', 'rabbit_quorum_queue'],
    ['oslo_messaging_notifications', 'driver'],
    ['oslo_middleware', 'enable_proxy_headers_parsing'],
    ['oslo_middleware', 'max_request_body_size'],
    ['oslo_policy', 'enforce_new_defaults'],
    ['oslo_concurrency', 'lock_path'],
    ['database', 'connection'],
    ['taskflow', 'connection'],
    ['coordination', 'backend_url'],
    ['wsgi', 'api_paste_config'],
  ] as const) {
    assert.ok(KNOWN_OPTIONS[group]?.[option], `[${group}] ${option}`);
  }
});

test.run();
