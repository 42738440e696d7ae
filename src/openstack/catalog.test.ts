import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { thrown } from '../testing/expect-error.ts';
import type { CatalogEntry } from './catalog.ts';
import { EndpointNotFound, normalizeInterface, parseCatalogInfo, selectEndpoint } from './catalog.ts';

const catalog: CatalogEntry[] = [
  {
    type: 'compute',
    name: 'nova',
    endpoints: [
      { interface: 'public', region_id: 'RegionOne', url: 'http://nova-one-public/v2.1/' },
      { interface: 'internal', region_id: 'RegionOne', url: 'http://nova-one-internal/v2.1' },
      { interface: 'public', region_id: 'RegionTwo', url: 'http://nova-two-public/v2.1' },
    ],
  },
  {
    type: 'compute',
    name: 'nova-legacy',
    endpoints: [{ interface: 'admin', region: 'RegionOne', url: 'http://legacy-admin' }],
  },
  {
    type: 'instance-ha',
    name: 'masakari',
    endpoints: [{ interface: 'public', region_id: 'RegionOne', url: 'http://ha/v1' }],
  },
];

test('parseCatalogInfo reads Masakari nova_catalog_admin_info', () => {
  assert.equal(parseCatalogInfo('compute:nova:publicURL'), {
    serviceType: 'compute',
    serviceName: 'nova',
    interface: 'public',
  });
  assert.equal(parseCatalogInfo('compute::internalURL'), {
    serviceType: 'compute',
    serviceName: null,
    interface: 'internal',
  });
  assert.throws(() => parseCatalogInfo('compute:nova'), /expected <service_type>:<service_name>:<endpoint_type>/);
  assert.throws(() => parseCatalogInfo('compute:nova:privateURL'), /Invalid endpoint interface 'privateURL'/);
});

test('normalizeInterface accepts v3 names and the URL-suffixed v2 names', () => {
  assert.is(normalizeInterface('publicURL'), 'public');
  assert.is(normalizeInterface('adminURL'), 'admin');
  assert.is(normalizeInterface('internal'), 'internal');
});

test('selectEndpoint filters by type, name, interface and region and trims the trailing slash', () => {
  const pick = (f: Parameters<typeof selectEndpoint>[1]) => selectEndpoint(catalog, f);
  assert.is(
    pick({ serviceType: 'compute', serviceName: 'nova', interface: 'public', region: 'RegionOne' }),
    'http://nova-one-public/v2.1',
  );
  assert.is(
    pick({ serviceType: 'compute', serviceName: 'nova', interface: 'public', region: 'RegionTwo' }),
    'http://nova-two-public/v2.1',
  );
  assert.is(
    pick({ serviceType: 'compute', serviceName: 'nova', interface: 'internal' }),
    'http://nova-one-internal/v2.1',
  );
  assert.is(
    pick({ serviceType: 'compute', serviceName: null, interface: 'admin', region: 'RegionOne' }),
    'http://legacy-admin',
  );
  assert.is(pick({ serviceType: 'instance-ha', interface: 'public' }), 'http://ha/v1');
});

test('selectEndpoint names what it looked for when nothing matches', () => {
  const err = thrown(
    () =>
      selectEndpoint(catalog, { serviceType: 'compute', serviceName: 'nova', interface: 'admin', region: 'RegionOne' }),
    EndpointNotFound,
  );
  assert.is(
    err.message,
    'No endpoint in the service catalog matches type=compute, name=nova, interface=admin, region=RegionOne',
  );
});

test.run();
