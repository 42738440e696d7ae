// Fuzzing the kubectl path (fault issue: "fuzz the notification payloads
// through the kubectl path"): seeded random Notification objects, valid ones
// with fields replaced, removed or added at any depth, created straight
// through the API server as kubectl or a GitOps tool would, with the store
// reconcilers running. Every object is either refused by the API server with a
// 4xx (the CRD schema, the webhook is not in this path here) or, once created,
// ends admitted (visible through the Masakari API) or refused with a Ready=False
// reason; none is left undecided, and the reconcilers never crash (the suite
// runs with --unhandled-rejections=strict). The seed is printed.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KubeError } from '../../../src/k8s/client.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { API_VERSION } from '../../../src/model/constants.ts';
import type { Notification } from '../../../src/model/types.ts';
import { isAdmitted, isRefused } from '../../../src/domain/admitted.ts';
import { Fuzzer } from '../../../src/domain/testing/fuzz.ts';
import type { StoreEnv } from './helpers.ts';
import { eventually, storeEnv } from './helpers.ts';

const SEED = Number(process.env.MASAKARI_FUZZ_SEED ?? 20261201);
const CASES = 80;

const fuzz = suite<{ env: StoreEnv }>('kubectl path: fuzzed notifications', { env: undefined as unknown as StoreEnv });
fuzz.before(async (ctx) => {
  ctx.env = await storeEnv('store-kubectl-fuzz');
});
fuzz.after(async (ctx) => {
  await ctx.env.close();
});

const base = (i: number) => ({
  type: ['PROCESS', 'VM', 'COMPUTE_HOST'][i % 3],
  hostname: 'compute-f1',
  generatedTime: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString().replace('.000Z', 'Z'),
  payload: [
    { process_name: 'nova-compute', event: 'STOPPED' },
    {
      event: 'LIFECYCLE',
      instance_uuid: `6c0b7e5e-0000-4000-8000-${String(i).padStart(12, '0')}`,
      vir_domain_event: 'STOPPED_FAILED',
    },
    { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
  ][i % 3],
});

fuzz(
  `seed ${SEED}: every created notification ends admitted or refused, and the API server refuses the rest with a 4xx`,
  async ({ env }) => {
    process.stdout.write(`[kubectl-fuzz] seed ${SEED}, ${CASES} cases\n`);
    const repo = await env.open();
    await env.kubectl(
      ['apply', '-n', env.namespace, '-f', '-'],
      `apiVersion: ${API_VERSION}
kind: FailoverSegment
metadata: {name: fuzz-seg}
spec: {name: fuzz-seg, recoveryMethod: auto, serviceType: COMPUTE}
---
apiVersion: ${API_VERSION}
kind: HaHost
metadata: {name: fuzz-host}
spec: {name: compute-f1, segmentRef: {name: fuzz-seg}, type: COMPUTE, controlAttributes: SSH}
`,
    );
    await eventually(
      'host admitted',
      () => repo.getHostByName('compute-f1'),
      (h) => !!h,
    );

    const fuzzer = new Fuzzer(SEED);
    const created: string[] = [];
    const refusedByApiServer: number[] = [];
    for (let i = 0; i < CASES; i++) {
      // A quarter stay valid, so the admitted side is exercised too; a quarter
      // change only the payload (free-form for the CRD schema: the reconciler's
      // Masakari validation decides); the rest change anything.
      const valid = base(i);
      const spec =
        i % 4 === 0
          ? valid
          : i % 4 === 1
            ? { ...valid, payload: fuzzer.chance(0.5) ? fuzzer.mutate(valid.payload) : fuzzer.json(3) }
            : fuzzer.mutate(valid);
      const body = { apiVersion: API_VERSION, kind: 'Notification', metadata: { name: `nf-${i}` }, spec };
      try {
        await env.kube.create<Notification>(RESOURCES.notifications, env.namespace, body as unknown as Notification);
        created.push(`nf-${i}`);
      } catch (e) {
        assert.ok(e instanceof KubeError, `case ${i}: ${String(e)}`);
        assert.ok(e.code >= 400 && e.code < 500, `case ${i}: the API server answered ${e.code}: ${e.message}`);
        refusedByApiServer.push(e.code);
      }
    }
    process.stdout.write(
      `[kubectl-fuzz] ${created.length} created, ${refusedByApiServer.length} refused by the API server (${[...new Set(refusedByApiServer)].join(', ')})\n`,
    );
    assert.ok(created.length >= CASES / 4, 'the valid quarter was created');

    const decided = (n: Notification) => isAdmitted(n) || isRefused(n);
    const undecided = await eventually(
      'every created notification admitted or refused',
      async () => {
        const left: string[] = [];
        for (const name of created) {
          const n = await env.kube.get<Notification>(RESOURCES.notifications, env.namespace, name);
          if (!decided(n)) left.push(`${name}: ${JSON.stringify(n.status ?? {})}`);
        }
        return left;
      },
      (left) => left.length === 0,
      60_000,
    );
    assert.equal(undecided, []);
    // The Masakari view lists exactly the admitted ones, and answers.
    const admitted = new Set<string>();
    for (const name of created) {
      const n = await env.kube.get<Notification>(RESOURCES.notifications, env.namespace, name);
      if (isAdmitted(n)) admitted.add(n.status?.uuid as string);
    }
    const listed = await eventually(
      'the repository lists every admitted one',
      () => repo.listNotifications().map((r) => r.notification_uuid),
      (uuids) => [...admitted].every((u) => uuids.includes(u)),
    );
    process.stdout.write(
      `[kubectl-fuzz] ${admitted.size} admitted, ${created.length - admitted.size} refused by the reconciler\n`,
    );
    assert.ok(admitted.size >= 1, 'some notifications were admitted');
    assert.ok(listed.length >= admitted.size);
  },
);

fuzz.run();
