// Which servers a host recovery moves, on real Nova 34 (docs/operations.md,
// "Which servers recover"): the OpenKeel selectors of [host_failure] beside
// Masakari's HA_Enabled metadata. A flavor's extra spec, a Glance image's
// property and a host aggregate's metadata (`evacuable`) each select; a name
// pattern keeps a server out; a metadata priority orders the evacuations,
// checked in Nova's own migration records. The failed host's nova-compute is
// really SIGKILLed and the notification is sent once Nova reports it down.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EVACUABLE_IMAGE_ID } from '../../tools/openstack-cloud/standins.ts';
import { bootServer, waitServers, type NovaCall } from '../../tools/openstack-cloud/servers.ts';
import {
  evacuations,
  facade,
  failHost,
  HOST_DOWN_PAYLOAD,
  notify,
  servers,
  uniq,
  waitNotification,
  withScenario,
  createSegment,
  type Env,
} from './support/scenario.ts';

const test = suite('which servers recover on real Nova');

const FAILED = 'cpu1';
const TAGGED_FLAVOR = 'm1.fake-evacuable';

/** A flavor like the suite's with the extra spec evacuable=true; flavors survive the cloud reset. */
async function ensureTaggedFlavor(admin: NovaCall): Promise<string> {
  const list = (await admin('GET', '/flavors')).body as { flavors: { id: string; name: string }[] };
  const found = list.flavors.find((f) => f.name === TAGGED_FLAVOR);
  const id =
    found?.id ??
    (
      (await admin('POST', '/flavors', { flavor: { name: TAGGED_FLAVOR, vcpus: 1, ram: 128, disk: 1 } })).body as {
        flavor: { id: string };
      }
    ).flavor.id;
  const specs = await admin('POST', `/flavors/${id}/os-extra_specs`, { extra_specs: { evacuable: 'true' } });
  if (specs.status !== 200) throw new Error(`flavor extra specs: HTTP ${specs.status} ${JSON.stringify(specs.body)}`);
  return id;
}

async function createAggregate(e: Env, metadata: Record<string, string>): Promise<number> {
  const created = await e.cloud.admin('POST', '/os-aggregates', { aggregate: { name: uniq('ha-agg') } });
  const id = (created.body as { aggregate: { id: number } }).aggregate.id;
  await e.cloud.admin('POST', `/os-aggregates/${id}/action`, { add_host: { host: FAILED } });
  await e.cloud.admin('POST', `/os-aggregates/${id}/action`, { set_metadata: { metadata } });
  return id;
}

async function hostOf(e: Env, id: string): Promise<string> {
  const [s] = await servers(e, [id]);
  return s?.['OS-EXT-SRV-ATTR:host'] ?? '';
}

/** The notification's recovery_workflow_details as text (API microversion 1.3). */
async function details(e: Env, id: string): Promise<string> {
  const { notification } = (await facade(e, 'GET', `/notifications/${id}`)) as {
    notification: { recovery_workflow_details?: unknown };
  };
  return JSON.stringify(notification.recovery_workflow_details ?? []);
}

test('a tagged flavor and a tagged image select servers, on a host the tagged aggregate lets recover', async () => {
  await withScenario(
    'openstack-tags',
    async (e) => {
      const { admin } = e.cloud;
      const taggedFlavor = await ensureTaggedFlavor(admin);
      const tag = uniq(FAILED);
      const segment = await createSegment(e, 'auto', [{ name: 'cpu1' }, { name: 'cpu2' }, { name: 'cpu3' }]);
      // none of them has HA_Enabled, and evacuate_all_instances is false (OPERATOR_ENV)
      const [byFlavor, byImage, plain] = await Promise.all([
        bootServer(admin, taggedFlavor, { name: `${tag}-by-flavor`, host: FAILED, haEnabled: false }),
        bootServer(admin, e.flavor, {
          name: `${tag}-by-image`,
          host: FAILED,
          haEnabled: false,
          imageId: EVACUABLE_IMAGE_ID,
        }),
        bootServer(admin, e.flavor, { name: `${tag}-plain`, host: FAILED, haEnabled: false }),
      ]);
      await waitServers(admin, [byFlavor, byImage, plain], 'ACTIVE');
      const aggregate = await createAggregate(e, { evacuable: 'false' });
      await failHost(e, FAILED);

      // the host's only aggregate is not tagged: its recovery is skipped, nothing moves
      const skipped = await waitNotification(
        e,
        (await notify(e, 'COMPUTE_HOST', FAILED, HOST_DOWN_PAYLOAD)).notification_uuid,
      );
      assert.is(skipped.status, 'finished', JSON.stringify(skipped));
      assert.match(
        await details(e, skipped.notification_uuid),
        `Skipped host '${FAILED}' recovery as it is in no aggregate with metadata 'evacuable' set true (tagged_aggregates)`,
      );
      for (const id of [byFlavor, byImage, plain]) assert.is((await evacuations(e, id)).length, 0);

      // tagged now; the operator clears the maintenance the first notification latched, as after any recovery
      await e.cloud.admin('POST', `/os-aggregates/${aggregate}/action`, {
        set_metadata: { metadata: { evacuable: 'true' } },
      });
      const { hosts } = (await facade(e, 'GET', `/segments/${segment.id}/hosts`)) as {
        hosts: { uuid: string; name: string }[];
      };
      const failed = hosts.find((h) => h.name === FAILED);
      assert.ok(failed, `${FAILED} is a host of the segment`);
      await facade(e, 'PUT', `/segments/${segment.id}/hosts/${failed.uuid}`, { host: { on_maintenance: false } });
      const recovered = await waitNotification(
        e,
        (await notify(e, 'COMPUTE_HOST', FAILED, HOST_DOWN_PAYLOAD)).notification_uuid,
      );
      assert.is(recovered.status, 'finished', JSON.stringify(recovered));
      for (const id of [byFlavor, byImage]) {
        assert.is((await evacuations(e, id)).length, 1, `${id}: one evacuation`);
        assert.ok(['cpu2', 'cpu3'].includes(await hostOf(e, id)), `${id} moved off ${FAILED}`);
      }
      assert.is((await evacuations(e, plain)).length, 0, 'the untagged server was not evacuated');
      assert.is(await hostOf(e, plain), FAILED);
    },
    {
      env: {
        MASAKARI__HOST_FAILURE__TAGGED_FLAVORS: 'true',
        MASAKARI__HOST_FAILURE__TAGGED_IMAGES: 'true',
        MASAKARI__HOST_FAILURE__TAGGED_AGGREGATES: 'true',
        // the second notification repeats the first's payload
        MASAKARI__DEFAULT__DUPLICATE_NOTIFICATION_DETECTION_INTERVAL: '0',
      },
    },
  );
});

test('a server named like skip_servers_with_name stays; the others move in priority order (Nova migration ids)', async () => {
  await withScenario(
    'openstack-priority',
    async (e) => {
      const { admin } = e.cloud;
      const tag = uniq(FAILED);
      await createSegment(e, 'auto', [{ name: 'cpu1' }, { name: 'cpu2' }, { name: 'cpu3' }]);
      const boot = (name: string, priority?: string) =>
        bootServer(admin, e.flavor, {
          name: `${tag}-${name}`,
          host: FAILED,
          ...(priority === undefined ? {} : { metadata: { HA_Priority: priority } }),
        });
      const [low, none, high, mid, scratch] = await Promise.all([
        boot('low', '1'),
        boot('none'),
        boot('high', '10'),
        boot('mid', '5'),
        boot('scratch', '100'),
      ]);
      const all = [low, none, high, mid, scratch] as string[];
      await waitServers(admin, all, 'ACTIVE');
      await failHost(e, FAILED);
      const done = await waitNotification(
        e,
        (await notify(e, 'COMPUTE_HOST', FAILED, HOST_DOWN_PAYLOAD)).notification_uuid,
      );
      assert.is(done.status, 'finished', JSON.stringify(done));

      assert.is((await evacuations(e, scratch)).length, 0, 'the excluded server was not evacuated');
      assert.is(await hostOf(e, scratch), FAILED);
      assert.match(
        await details(e, done.notification_uuid),
        `Skipping recovery of instance '${scratch}' as its name '${tag}-scratch' matches skip_servers_with_name pattern '-scratch$'.`,
      );
      // one evacuation at a time: Nova numbers the migrations in the order the evacuations were sent
      const order: Array<{ id: string; migration: number }> = [];
      for (const id of [high, mid, low, none]) {
        const moves = await evacuations(e, id);
        assert.is(moves.length, 1, `${id}: ${JSON.stringify(moves)}`);
        order.push({ id, migration: moves[0]!.id });
      }
      assert.equal(
        [...order].sort((a, b) => a.migration - b.migration).map((o) => o.id),
        [high, mid, low, none],
        'evacuated highest HA_Priority first, a server without one last',
      );
    },
    {
      env: {
        MASAKARI__HOST_FAILURE__SKIP_SERVERS_WITH_NAME: '-scratch$',
        MASAKARI__HOST_FAILURE__PRIORITY_METADATA_KEY: 'HA_Priority',
        MASAKARI__DEFAULT__HOST_FAILURE_RECOVERY_THREADS: '1',
      },
    },
  );
});

test.run();
