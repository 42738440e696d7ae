// Fuzzing the validating webhook: seeded random AdmissionReviews (valid ones
// with fields replaced, removed or added at any depth, and arbitrary JSON)
// sent over HTTPS to the real server with the real rules. Every answer is a
// 200 AdmissionReview or a 4xx; a denial never carries a 5xx code; the
// process never crashes (tests run with --unhandled-rejections=strict).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { post } from './testing/post.ts';
import https from 'node:https';
import { pino } from 'pino';
import { API_VERSION, FIELD_MANAGERS, GROUP, VERSION } from '../model/constants.ts';
import { MemoryRepository } from '../domain/testing/memory-repository.ts';
import { HaService } from '../domain/ha-service.ts';
import { Fuzzer } from '../domain/testing/fuzz.ts';
import { MASAKARI_VALIDATORS } from '../domain/spec-validators.ts';
import { AdmissionRules } from './rules.ts';
import { startWebhookServer } from './server.ts';

const SEED = Number(process.env.MASAKARI_FUZZ_SEED ?? 20261201);
const CASES = 2_000;

const bases = [
  {
    kind: 'FailoverSegment',
    resource: 'failoversegments',
    object: {
      apiVersion: API_VERSION,
      kind: 'FailoverSegment',
      metadata: { name: 'seg-1', generation: 1 },
      spec: { name: 'seg-1', recoveryMethod: 'auto', serviceType: 'COMPUTE', enabled: true },
    },
  },
  {
    kind: 'HaHost',
    resource: 'hahosts',
    object: {
      apiVersion: API_VERSION,
      kind: 'HaHost',
      metadata: { name: 'compute-1', generation: 1 },
      spec: { name: 'compute-1', segmentRef: { name: 'seg-1' }, type: 'COMPUTE', controlAttributes: 'SSH' },
    },
  },
  {
    kind: 'Notification',
    resource: 'notifications',
    object: {
      apiVersion: API_VERSION,
      kind: 'Notification',
      metadata: { name: 'n-1' },
      spec: {
        type: 'COMPUTE_HOST',
        hostname: 'compute-1',
        generatedTime: '2026-01-01T00:00:00Z',
        payload: { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
      },
    },
  },
];

test(`${CASES} random AdmissionReviews (seed ${SEED}): 200 or 4xx, never a 5xx, never a crash`, async () => {
  const f = new Fuzzer(SEED);
  const repo = new MemoryRepository();
  const service = new HaService(
    repo,
    { exists: async (n) => n === 'compute-1' },
    {
      osapi_max_limit: 1000,
      duplicate_notification_detection_interval: 180,
    },
  );
  const rules = new AdmissionRules({
    repo,
    segmentExists: async () => false,
    underRecovery: (uuid) => service.isUnderRecovery(uuid),
    compute: { exists: async (n) => n === 'compute-1' },
    validators: MASAKARI_VALIDATORS,
    trust: { fieldManagers: Object.values(FIELD_MANAGERS), operatorUsers: ['system:serviceaccount:m:op'] },
    novaTimeoutMs: 1000,
    log: pino({ level: 'silent' }),
  });
  const server = await startWebhookServer({
    listen: { host: '127.0.0.1', port: 0 },
    rules,
    log: pino({ level: 'silent' }),
  });
  const agent = new https.Agent({ keepAlive: true, maxSockets: 4 });
  const counts: Record<string, number> = {};
  try {
    for (let i = 0; i < CASES; i++) {
      const base = f.pick(bases);
      const operation = f.pick(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);
      const review = {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: {
          uid: `uid-${i}`,
          kind: { group: GROUP, version: VERSION, kind: base.kind },
          resource: { group: GROUP, version: VERSION, resource: base.resource },
          name: base.object.metadata.name,
          namespace: 'ns',
          operation,
          userInfo: { username: f.pick(['alice', 'system:serviceaccount:m:op']) },
          options: f.chance(0.3) ? { fieldManager: f.pick(Object.values(FIELD_MANAGERS)) } : undefined,
          object: operation === 'DELETE' ? null : f.mutate(base.object, 5),
          oldObject: operation === 'CREATE' ? null : f.mutate(base.object, 5),
        },
      };
      // Mostly well-formed envelopes around random objects (what reaches the rules); some broken envelopes.
      const roll = f.int(20);
      const body = JSON.stringify(roll === 0 ? f.json(4) : roll < 3 ? f.mutate(review, 6) : review);
      const res = await post(server, server.caPem!, body, {
        agent,
        headers: { 'content-length': Buffer.byteLength(body) },
      });
      const key = String(res.status);
      counts[key] = (counts[key] ?? 0) + 1;
      const where = `case ${i} (seed ${SEED}): ${body.slice(0, 1500)} → ${res.status} ${res.text.slice(0, 300)}`;
      assert.ok(res.status === 200 || (res.status >= 400 && res.status < 500), where);
      if (res.status !== 200) continue;
      const answer = JSON.parse(res.text) as { response: { allowed: boolean; status?: { code: number } } };
      assert.type(answer.response.allowed, 'boolean', where);
      if (!answer.response.allowed) assert.ok((answer.response.status?.code ?? 0) < 500, where);
    }
    process.stdout.write(`[fuzz] webhook seed ${SEED}: ${JSON.stringify(counts)}\n`);
  } finally {
    agent.destroy();
    await server.stop();
  }
});

test.run();
