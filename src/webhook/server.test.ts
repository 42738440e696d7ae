// The webhook's HTTPS endpoint: AdmissionReview in, AdmissionReview out;
// malformed requests get a clear 4xx; a rotated certificate in the cert
// directory is served without a restart.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { post } from './testing/post.ts';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { AdmissionRequest, Verdict } from './review.ts';
import { allow, deny } from './review.ts';
import { kindLabel, operationLabel, OTHER_LABEL } from './metrics.ts';
import { startWebhookServer } from './server.ts';
import { selfSignedKeyPair } from './self-signed.ts';

const log = pino({ level: 'silent' });

/** Denies segments named "no", throws for "boom", allows the rest. */
const rules = {
  async review(req: AdmissionRequest): Promise<Verdict> {
    const name = (req.object as { spec?: { name?: string } } | undefined)?.spec?.name;
    if (name === 'boom') throw new Error('bug');
    return name === 'no' ? deny(409, 'Conflict', 'Failover segment with name no already exists.') : allow(['heads up']);
  },
};

const review = (name: string) =>
  JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${name}`,
      kind: { group: 'masakari.openkeel.io', version: 'v1alpha1', kind: 'FailoverSegment' },
      resource: { group: 'masakari.openkeel.io', version: 'v1alpha1', resource: 'failoversegments' },
      operation: 'CREATE',
      object: { metadata: { name }, spec: { name } },
    },
  });

test('answers AdmissionReviews over TLS with the self-signed CA, and refuses malformed requests with 4xx', async () => {
  const metrics = new Registry();
  const server = await startWebhookServer({ listen: { host: '127.0.0.1', port: 0 }, rules, log, metrics });
  try {
    assert.ok(server.caPem?.includes('BEGIN CERTIFICATE'));
    assert.is(server.url(), `https://127.0.0.1:${server.address().port}/validate`);
    const ca = server.caPem!;
    const ok = await post(server, ca, review('fine'));
    assert.is(ok.status, 200);
    assert.equal(JSON.parse(ok.text), {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'uid-fine', allowed: true, warnings: ['heads up'] },
    });
    const no = JSON.parse((await post(server, ca, review('no'))).text);
    assert.equal(no.response, {
      uid: 'uid-no',
      allowed: false,
      status: { code: 409, reason: 'Conflict', message: 'Failover segment with name no already exists.' },
    });
    const boom = JSON.parse((await post(server, ca, review('boom'))).text);
    assert.is(boom.response.allowed, false);
    assert.is(boom.response.status.code, 500);

    assert.is((await post(server, ca, '{not json')).status, 400);
    const wrong = await post(
      server,
      ca,
      JSON.stringify({ apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview' }),
    );
    assert.is(wrong.status, 400);
    assert.match(wrong.text, 'expected apiVersion admission.k8s.io/v1');
    const noUid = JSON.parse(review('x'));
    delete noUid.request.uid;
    assert.match((await post(server, ca, JSON.stringify(noUid))).text, 'request.uid must be a non-empty string');
    assert.is((await post(server, ca, review('x'), { type: 'text/plain' })).status, 415);
    assert.is((await post(server, ca, review('x'), { path: '/other' })).status, 404);
    assert.is((await post(server, ca, '', { method: 'GET' })).status, 405);

    const counted = await metrics.getSingleMetricAsString('masakari_webhook_reviews_total');
    assert.match(counted, 'result="denied"');
    assert.match(counted, 'result="error"');
  } finally {
    await server.stop();
  }
});

test('a rotated certificate in the cert directory is served without a restart', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'webhook-tls-'));
  const first = await selfSignedKeyPair();
  const second = await selfSignedKeyPair();
  const write = async (p: { cert: string; key: string }) => {
    await writeFile(join(dir, 'tls.key'), p.key);
    await writeFile(join(dir, 'tls.crt'), p.cert);
  };
  await write(first);
  const server = await startWebhookServer({
    listen: { host: '127.0.0.1', port: 0 },
    certDir: dir,
    certPollMs: 30,
    rules,
    log,
  });
  try {
    assert.is(server.caPem, undefined, 'no CA of ours when the certificate comes from files');
    assert.is((await post(server, first.caPem, review('a'))).status, 200);
    // half-rotated (new key, old certificate): the old pair keeps being served
    await writeFile(join(dir, 'tls.key'), second.key);
    await new Promise((r) => setTimeout(r, 120));
    assert.is((await post(server, first.caPem, review('a'))).status, 200);
    await write(second);
    const deadline = Date.now() + 5_000;
    let served = false;
    while (!served && Date.now() < deadline) {
      served = await post(server, second.caPem, review('b')).then(
        (r) => r.status === 200,
        () => false,
      );
      if (!served) await new Promise((r) => setTimeout(r, 30));
    }
    assert.ok(served, 'the new certificate is served');
    await post(server, first.caPem, review('c')).then(
      () => assert.unreachable('the old CA must no longer verify'),
      (e: Error) => assert.match(e.message, /certificate|self.signed|verify/i),
    );
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('a missing or mismatched certificate fails the start naming the directory', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'webhook-tls-'));
  try {
    const start = () => startWebhookServer({ listen: { host: '127.0.0.1', port: 0 }, certDir: dir, rules, log });
    await start().then(
      () => assert.unreachable(),
      (e: Error) => assert.match(e.message, `webhook: cannot read tls.crt and tls.key in ${dir}`),
    );
    await writeFile(join(dir, 'tls.crt'), (await selfSignedKeyPair()).cert);
    await writeFile(join(dir, 'tls.key'), (await selfSignedKeyPair()).key);
    await start().then(
      () => assert.unreachable(),
      (e: Error) => assert.match(e.message, 'are not a usable pair'),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('made-up kinds in AdmissionReviews are counted as "other": metric labels stay bounded', async () => {
  const metrics = new Registry();
  const server = await startWebhookServer({ listen: { host: '127.0.0.1', port: 0 }, rules, log, metrics });
  try {
    const ca = server.caPem!;
    for (let i = 0; i < 50; i++) {
      const body = JSON.parse(review('fine'));
      body.request.kind.kind = `Kind${i}`;
      assert.is((await post(server, ca, JSON.stringify(body))).status, 200);
    }
    assert.is((await post(server, ca, review('fine'))).status, 200);
    const counted = await metrics.getSingleMetricAsString('masakari_webhook_reviews_total');
    const series = counted.split('\n').filter((l) => l.startsWith('masakari_webhook_reviews_total{'));
    assert.equal(series.sort(), [
      'masakari_webhook_reviews_total{kind="FailoverSegment",operation="CREATE",result="allowed"} 1',
      'masakari_webhook_reviews_total{kind="other",operation="CREATE",result="allowed"} 50',
    ]);
    const durations = await metrics.getSingleMetricAsString('masakari_webhook_review_duration_seconds');
    assert.not.match(durations, 'Kind1');
  } finally {
    await server.stop();
  }
});

test('metric labels: only our kinds and the admission operations are label values', () => {
  assert.is(kindLabel('HaHost'), 'HaHost');
  assert.is(kindLabel('Pod'), OTHER_LABEL);
  assert.is(kindLabel({ toString: () => 'HaHost' }), OTHER_LABEL);
  assert.is(operationLabel('DELETE'), 'DELETE');
  assert.is(operationLabel('delete'), OTHER_LABEL);
});

test('fuzz regression: an object whose metadata is not an object is a 400, not an internal error', async () => {
  const { parseAdmissionReview } = await import('./review.ts');
  const body = JSON.parse(review('x'));
  body.request.operation = 'DELETE';
  body.request.object = null;
  body.request.oldObject = { apiVersion: 'masakari.openkeel.io/v1alpha1', kind: 'HaHost', metadata: null, spec: 'a' };
  assert.equal(parseAdmissionReview(body), { error: 'AdmissionReview.request.oldObject.metadata must be an object' });
  body.request.oldObject.metadata = { name: 'h' };
  assert.equal(parseAdmissionReview(body), { error: 'AdmissionReview.request.oldObject.spec must be an object' });
});

test.run();
