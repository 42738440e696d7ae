// Built-in detection on real Nova 34 when it cannot see: a segment of
// cpu1..cpu3 with spec.detection on. First Nova cannot be reached at all (the
// recording proxy the catalog points at closes every connection), then Nova
// is back but reports every compute down at once (all three nova-computes
// SIGKILLed). Either is an observation problem, not three failed hosts: no
// notification is raised, the observation metric says so (the one the alert
// MasakariDetectionBlind fires on), and once Nova sees again it clears.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  alertExpr,
  DETECTION,
  hostUuid,
  metricValue,
  notificationsOf,
  patchSegment,
  sleep,
  waitFor,
} from './support/bmc.ts';
import { computeService, createSegment, withScenario, type Env } from './support/scenario.ts';

const test = suite('detection that cannot see, on real Nova');

const HOSTS = ['cpu1', 'cpu2', 'cpu3'];
const GRACE_S = 6;
const HEALTHY = 'masakari_detection_observation_healthy';
const POLLS = 'masakari_detection_polls_total';

async function noneRaised(e: Env, uuids: string[]): Promise<void> {
  for (const u of uuids) assert.is((await notificationsOf(e, u)).length, 0, `a notification was raised for ${u}`);
}

test('Nova unreachable, then every host down at once: nothing raised, the observation metric set', async () => {
  await withScenario(
    'openstack-detect-blind',
    async (e) => {
      const segment = await createSegment(
        e,
        'auto',
        HOSTS.map((name) => ({ name })),
      );
      await patchSegment(e, segment.id, { detection: { enabled: true, gracePeriodSeconds: GRACE_S } });
      const uuids = await Promise.all(HOSTS.map((h) => hostUuid(e, segment.id, h)));
      assert.ok(alertExpr('MasakariDetectionBlind').includes(HEALTHY), alertExpr('MasakariDetectionBlind'));
      await waitFor('a healthy look', async () => ((await metricValue(e, HEALTHY)) === 1 ? true : undefined), 60_000);

      // Nova unreachable, well past the grace period
      await e.cloud.setNovaDown(true);
      try {
        await waitFor('Nova unreachable seen', async () =>
          ((await metricValue(e, POLLS, { result: 'nova_unreachable' })) ?? 0) > 0 ? true : undefined,
        );
        await sleep((GRACE_S + 6) * 1000);
        assert.is(await metricValue(e, HEALTHY), 0);
      } finally {
        await e.cloud.setNovaDown(false);
      }
      await noneRaised(e, uuids);
      await waitFor('healthy again', async () => ((await metricValue(e, HEALTHY)) === 1 ? true : undefined), 60_000);

      // every host down at once
      await Promise.all(HOSTS.map((h) => e.cloud.killCompute(h)));
      await waitFor('Nova reports every compute down', async () => {
        const states = await Promise.all(HOSTS.map(async (h) => (await computeService(e, h)).state));
        return states.every((s) => s === 'down') ? true : undefined;
      });
      await waitFor('most hosts down seen', async () =>
        ((await metricValue(e, POLLS, { result: 'most_hosts_down' })) ?? 0) > 0 ? true : undefined,
      );
      await sleep((GRACE_S + 6) * 1000);
      assert.is(await metricValue(e, HEALTHY), 0);
      await noneRaised(e, uuids);
    },
    DETECTION,
  );
});

test.run();
