// Notification retention on a real API server, as the store leader runs it:
// what ended more than [operator] notification_retention_days ago goes (with
// its duplicate claim), a running notification of the same age and a
// recently finished one stay.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { LABELS } from '../../../src/model/constants.ts';
import type { Notification } from '../../../src/model/types.ts';
import type { ConfigMap } from '../../../src/store/configmap.ts';
import { ROLES } from '../../../src/store/configmap.ts';
import type { StoreEnv } from './helpers.ts';
import { eventually, hostInput, segmentInput, storeEnv } from './helpers.ts';

const retention = suite<{ env: StoreEnv }>('notification retention', { env: undefined as unknown as StoreEnv });
retention.before(async (ctx) => {
  ctx.env = await storeEnv('store-retention');
});
retention.after(async (ctx) => {
  await ctx.env.close();
});

const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z');

retention(
  'the leader deletes notifications that ended past the retention (30 days), and nothing else',
  async ({ env }) => {
    // A short period so the test need not wait for the hourly pass.
    const repo = await env.open({ retentionFirstAfterMs: 100, retentionIntervalMs: 300 });
    const seg = await repo.createSegment(segmentInput('ret'));
    const host = await repo.createHost(seg.uuid, hostInput('compute-ret'));
    const rows = [
      ['finished-40d', 'finished', 40],
      ['ignored-31d', 'ignored', 31],
      ['running-40d', 'running', 40],
      ['finished-1d', 'finished', 1],
    ] as const;
    const names: Record<string, string> = {};
    for (const [label, phase, age] of rows) {
      const n = await repo.createNotification(
        {
          type: 'PROCESS',
          hostname: 'compute-ret',
          generated_time: '2026-01-01T00:00:00',
          payload: { process_name: label, event: 'STOPPED' },
          source_host_uuid: host.uuid,
          failover_segment_uuid: seg.uuid,
        },
        180,
      );
      await repo.settle();
      await env.kube.mergePatch(
        RESOURCES.notifications,
        env.namespace,
        n.k8sName,
        { status: { phase, updatedAt: daysAgo(age) } },
        { status: true },
      );
      names[label] = n.k8sName;
    }
    const left = await eventually(
      'the old terminal notifications are gone',
      async () =>
        (await env.kube.list<Notification>(RESOURCES.notifications, env.namespace)).items.map((n) => n.metadata.name),
      (items) => !items.includes(names['finished-40d']) && !items.includes(names['ignored-31d']),
    );
    assert.ok(left.includes(names['running-40d']), 'a running notification older than the retention is kept');
    assert.ok(left.includes(names['finished-1d']), 'a recently finished notification is kept');
    // Retention deletes a notification first and its claim right after (src/store/retention.ts): wait for both.
    const kept = [names['finished-1d'], names['running-40d']].sort();
    const claims = await eventually(
      "the deleted notifications' claims are gone",
      async () =>
        (
          await env.kube.list<ConfigMap>(RESOURCES.configMaps, env.namespace, {
            labelSelector: `${LABELS.role}=${ROLES.notificationClaim}`,
          })
        ).items
          .map((c) => c.data?.notification)
          .sort(),
      (found) => found.length <= kept.length,
    );
    assert.equal(claims, kept, 'claims went with their notifications');
  },
);

retention.run();
