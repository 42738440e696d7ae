// Reads the seeded objects back through the API server with kubectl before
// any number is taken from them: a seeding bug (above all one that writes
// straight into etcd) must stop the run, not show up as a fast benchmark.
//
// Checks one host's notifications in full (label selector on the host uuid),
// the host, its name claim, the number of objects stored, and field selectors
// on the CRD's selectable fields (spec.type, status.phase).
import { execFileSync } from 'node:child_process';
import { GROUP, KINDS, LABELS, VERSION } from '../../src/model/constants.ts';
import type { HaHost, Notification } from '../../src/model/types.ts';
import type { ConfigMap } from '../../src/store/configmap.ts';
import { claimObjectName } from '../../src/store/names.ts';
import { TEMPLATE_HOST, type SeedResult } from './seed.ts';
import { getRaw, kubectlPath } from '../lib/kubectl.ts';

export interface VerifyOptions {
  kubeconfigPath: string;
  namespace: string;
  seeded: SeedResult;
  /** Seeded notifications (the template adds one more). */
  notifications: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until the API server's watch cache of notifications has caught up
 * with etcd's `revision` (the last seeded write): a list at that
 * resourceVersion with resourceVersionMatch=NotOlderThan is served from the
 * watch cache once it has got there (before, the API server answers 504 "Too
 * large resource version" after 3 s). Writing 100,000 objects straight into
 * etcd leaves the API server decoding them for a while; lists sent meanwhile
 * would measure its catching up, not the operator. Returns the seconds waited.
 */
export async function waitForWatchCache(o: VerifyOptions & { revision: string }): Promise<number> {
  const t0 = performance.now();
  const path = `/apis/${GROUP}/${VERSION}/namespaces/${o.namespace}/${KINDS.notification.plural}`;
  const url = `${path}?limit=1&resourceVersion=${o.revision}&resourceVersionMatch=NotOlderThan`;
  for (let attempt = 1; ; attempt++) {
    try {
      getRaw(o.kubeconfigPath, url);
      return (performance.now() - t0) / 1000;
    } catch (e) {
      if (performance.now() - t0 > 15 * 60_000) {
        throw new Error(`the API server's watch cache did not reach revision ${o.revision} in 15 min: ${String(e)}`);
      }
      if (attempt % 10 === 1) console.log(`  waiting for the API server's watch cache (revision ${o.revision})...`);
      await sleep(2000);
    }
  }
}

export async function verifySeeded(o: VerifyOptions): Promise<void> {
  const run = (...args: string[]): string =>
    execFileSync(
      kubectlPath(),
      ['--kubeconfig', o.kubeconfigPath, '-n', o.namespace, '--request-timeout=5m', ...args],
      {
        encoding: 'utf8',
        maxBuffer: 1 << 30,
        timeout: 10 * 60_000,
      },
    );
  const json = <T>(...args: string[]): T => JSON.parse(run(...args, '-o', 'json')) as T;
  const count = (...args: string[]): number =>
    run(...args, '--chunk-size=500', '-o', 'name')
      .split('\n')
      .filter((l) => l.trim()).length;
  const problems: string[] = [];
  const expect = (what: string, got: unknown, want: unknown) => {
    if (got !== want) problems.push(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  };
  const notifications = `${KINDS.notification.plural}.${GROUP}`;
  const hahosts = `${KINDS.host.plural}.${GROUP}`;
  const { hosts } = o.seeded;
  const first = hosts[0];
  if (!first) throw new Error('verify: nothing seeded');

  // One host's notifications, in full: j % hosts == 0 for j = 0, hosts, 2·hosts, ...
  const perHost = Math.ceil(o.notifications / hosts.length);
  const mine = json<{ items: Notification[] }>('get', notifications, '-l', `${LABELS.hostUuid}=${first.uuid}`).items;
  expect(`notifications with label ${LABELS.hostUuid}=${first.uuid}`, mine.length, perHost);
  const uids = new Set<string>();
  for (const n of mine) {
    const name = n.metadata.name ?? '?';
    expect(`${name} spec.hostname`, n.spec.hostname, first.name);
    expect(`${name} status.phase`, n.status?.phase, 'finished');
    expect(`${name} status.uuid = label uuid`, n.status?.uuid, n.metadata.labels?.[LABELS.uuid]);
    expect(`${name} status.id = label id`, String(n.status?.id), n.metadata.labels?.[LABELS.id]);
    expect(`${name} has a resourceVersion`, !!n.metadata.resourceVersion, true);
    uids.add(n.metadata.uid ?? '');
  }
  expect('distinct uids of that host’s notifications', uids.size, mine.length);

  const host = json<{ items: HaHost[] }>('get', hahosts, '-l', `${LABELS.uuid}=${first.uuid}`).items;
  expect(`hosts with label ${LABELS.uuid}=${first.uuid}`, host.length, 1);
  expect('host spec.name', host[0]?.spec.name, first.name);
  expect('host status.uuid', host[0]?.status?.uuid, first.uuid);
  try {
    const claim = json<ConfigMap>('get', 'configmap', claimObjectName('host', first.name));
    expect('host name claim mentions the host', JSON.stringify(claim.data ?? {}).includes(first.name), true);
  } catch (e) {
    // Only a store without name claims has none; the template tells.
    let templateHasClaim = true;
    try {
      run('get', 'configmap', claimObjectName('host', TEMPLATE_HOST), '-o', 'name');
    } catch {
      templateHasClaim = false;
    }
    if (templateHasClaim) problems.push(`host name claim: ${(e as Error).message.split('\n')[0]}`);
  }

  // Counts without reading every object back: kubectl paging through 100,000 full objects takes over
  // ten minutes on a busy 2-core machine. The total is the first page of one plus the API server's
  // remainingItemCount; the field selectors on the selectable fields are checked where they match one
  // object (by name) or none (every seeded one is a finished COMPUTE_HOST notification), so the API server
  // evaluates them over every object but encodes almost nothing.
  const total = (plural: string): number => {
    const page = JSON.parse(
      run('get', '--raw', `/apis/${GROUP}/${VERSION}/namespaces/${o.namespace}/${plural}?limit=1`),
    ) as { items: unknown[]; metadata: { remainingItemCount?: number } };
    return page.items.length + (page.metadata.remainingItemCount ?? 0);
  };
  expect('hosts stored (first page + remainingItemCount)', total(KINDS.host.plural), hosts.length + 1);
  expect(
    'notifications stored (first page + remainingItemCount)',
    total(KINDS.notification.plural),
    o.notifications + 1,
  );
  const one = mine[0]?.metadata.name ?? '';
  expect(
    `notifications with spec.type=COMPUTE_HOST,metadata.name=${one}`,
    count('get', notifications, '--field-selector', `spec.type=COMPUTE_HOST,metadata.name=${one}`),
    1,
  );
  expect(
    'notifications with spec.type!=COMPUTE_HOST',
    count('get', notifications, '--field-selector', 'spec.type!=COMPUTE_HOST'),
    0,
  );
  expect(
    'notifications with status.phase!=finished',
    count('get', notifications, '--field-selector', 'status.phase!=finished'),
    0,
  );
  if (problems.length) throw new Error(`seeded objects do not read back right:\n  ${problems.join('\n  ')}`);
  console.log(
    `  kubectl: ${perHost} notifications of ${first.name} by label, its host and claim, ` +
      `${hosts.length + 1} hosts and ${o.notifications + 1} notifications stored, field selectors: as seeded`,
  );
}
