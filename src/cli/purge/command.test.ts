// `masakari-operator purge`: masakari-manage's option checks, the dry run's
// report, and a real run, over FakeKube.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCES } from '../../k8s/resources.ts';
import type { Notification } from '../../model/types.ts';
import { FakeKube } from '../../testing/fake-kube.ts';
import { UsageError } from '../usage.ts';
import { parsePurgeArgs, runPurgeCommand } from './command.ts';

const NOW = new Date('2026-03-01T00:00:00Z');

test('options: masakari-manage defaults, limits and spellings', () => {
  assert.equal(parsePurgeArgs([], NOW), {
    ageInDays: 30,
    maxRows: -1,
    dryRun: false,
    help: false,
    namespace: undefined,
    kubeconfig: undefined,
    configFiles: [],
  });
  assert.is(parsePurgeArgs(['--age_in_days', '7', '--max_rows', '5'], NOW).ageInDays, 7);
  assert.is(parsePurgeArgs(['--age-in-days', '0', '--dry-run'], NOW).dryRun, true);
  assert.throws(
    () => parsePurgeArgs(['--age-in-days=-1'], NOW),
    (e: Error) => e instanceof UsageError && /non-negative/.test(e.message),
  );
  assert.throws(() => parsePurgeArgs(['--max-rows', '0'], NOW), /greater than 0/);
  assert.throws(() => parsePurgeArgs(['--age-in-days', '100000'], NOW), /days since epoch/);
  assert.throws(() => parsePurgeArgs(['--age-in-days', 'x'], NOW), /integer/);
  assert.throws(
    () => parsePurgeArgs(['--nope'], NOW),
    (e: Error) => e instanceof UsageError,
  );
});

async function world() {
  const kube = new FakeKube();
  const add = async (name: string, phase: string, updatedAt: string) => {
    await kube.create<Notification>(RESOURCES.notifications, 'masakari', {
      apiVersion: 'masakari.openkeel.io/v1alpha1',
      kind: 'Notification',
      metadata: { name },
      spec: { type: 'VM', hostname: 'h', generatedTime: '2026-01-01T00:00:00', payload: {} },
    });
    await kube.mergePatch(
      RESOURCES.notifications,
      'masakari',
      name,
      { status: { phase, updatedAt } },
      { status: true },
    );
  };
  await add('old-finished', 'finished', '2026-01-01T00:00:00Z');
  await add('old-failed', 'failed', '2026-01-02T00:00:00Z');
  await add('old-running', 'running', '2026-01-01T00:00:00Z');
  await add('new-finished', 'finished', '2026-02-28T00:00:00Z');
  return kube;
}

async function run(argv: string[], kube: FakeKube) {
  let out = '';
  let err = '';
  const code = await runPurgeCommand(argv, {
    env: {},
    kube,
    now: () => NOW,
    stdout: (t) => (out += t),
    stderr: (t) => (err += t),
  });
  return { code, out, err };
}

test('--dry-run deletes nothing and reports the counts', async () => {
  const kube = await world();
  const r = await run(['--age-in-days', '30', '--dry-run'], kube);
  assert.is(r.code, 0, r.err);
  assert.is(
    r.out,
    'Would delete 2 notifications that ended more than 30 days ago (finished: 1, failed: 1, ignored: 0; 4 examined)\n',
  );
  assert.is(kube.all(RESOURCES.notifications, 'masakari').length, 4);
});

test('a real run deletes the terminal notifications older than N days', async () => {
  const kube = await world();
  const r = await run(['--age-in-days', '30'], kube);
  assert.is(r.code, 0, r.err);
  assert.match(r.out, /^Deleted 2 notifications that ended more than 30 days ago/);
  assert.equal(
    kube
      .all<Notification>(RESOURCES.notifications, 'masakari')
      .map((n) => n.metadata.name)
      .sort(),
    ['new-finished', 'old-running'],
  );
});

test('a usage error exits 2 with the usage text', async () => {
  const r = await run(['--age-in-days=-3'], await world());
  assert.is(r.code, 2);
  assert.match(r.err, /Must supply a non-negative value for age\./);
  assert.match(r.err, /usage: masakari-operator purge/);
});

test('--config-file: the namespace of a masakari.conf [operator] group is the one purged, as run reads it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'purge-conf-'));
  const conf = join(dir, 'masakari.conf');
  writeFileSync(
    conf,
    '[DEFAULT]\ntransport_url = rabbit://masakari@rabbitmq:5672/\n[operator]\nnamespace = elsewhere\n',
  );
  try {
    for (const argv of [['--config-file', conf], [`--config-file=${conf}`]]) {
      const r = await run(['--dry-run', ...argv], await world());
      assert.is(r.code, 0, r.err);
      assert.match(r.out, /; 0 examined\)\n$/);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
