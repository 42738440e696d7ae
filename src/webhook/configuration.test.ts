// The ValidatingWebhookConfiguration the tests and local runs register, and
// the settings the api pods get from the chart.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildValidatingWebhookConfiguration } from './configuration.ts';
import { serviceAccountUsername, webhookSettingsFromEnv } from './settings.ts';
import { defaultTrust } from './index.ts';
import { FIELD_MANAGERS } from '../model/constants.ts';

test('the configuration: Fail, no side effects, 5 s, v1 reviews, main resources only, one namespace', () => {
  const cfg = buildValidatingWebhookConfiguration({
    name: 'masakari-ns1',
    namespace: 'ns1',
    clientConfig: { url: 'https://127.0.0.1:9443/validate' },
    caPem: 'PEM',
  });
  const [hook] = cfg.webhooks;
  assert.equal(hook, {
    name: 'validate.masakari.openkeel.io',
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Fail',
    timeoutSeconds: 5,
    matchPolicy: 'Equivalent',
    clientConfig: { url: 'https://127.0.0.1:9443/validate', caBundle: Buffer.from('PEM').toString('base64') },
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ns1' } },
    rules: [
      {
        apiGroups: ['masakari.openkeel.io'],
        apiVersions: ['v1alpha1'],
        // no "/status": the operator's status writes never reach the webhook
        resources: ['failoversegments', 'hahosts', 'notifications'],
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        scope: 'Namespaced',
      },
    ],
  });
  const viaService = buildValidatingWebhookConfiguration({
    name: 'x',
    namespace: 'masakari',
    clientConfig: { service: { name: 'masakari-operator-webhook', namespace: 'masakari' } },
  });
  assert.equal(viaService.webhooks[0]?.clientConfig, {
    service: { path: '/validate', port: 443, name: 'masakari-operator-webhook', namespace: 'masakari' },
  });
});

test('MASAKARI_WEBHOOK_LISTEN and MASAKARI_WEBHOOK_CERT_DIR', () => {
  assert.is(webhookSettingsFromEnv({}), undefined);
  assert.equal(webhookSettingsFromEnv({ MASAKARI_WEBHOOK_LISTEN: '0.0.0.0:9443' }), {
    listen: { host: '0.0.0.0', port: 9443 },
  });
  assert.equal(
    webhookSettingsFromEnv({
      MASAKARI_WEBHOOK_LISTEN: '[::]:9443',
      MASAKARI_WEBHOOK_CERT_DIR: '/etc/masakari/webhook-tls',
    }),
    { listen: { host: '::', port: 9443 }, certDir: '/etc/masakari/webhook-tls' },
  );
  assert.throws(
    () => webhookSettingsFromEnv({ MASAKARI_WEBHOOK_LISTEN: '9443' }),
    /MASAKARI_WEBHOOK_LISTEN must be host:port with a port between 1 and 65535, got "9443"/,
  );
});

test('MASAKARI_WEBHOOK_OPERATOR_USERS: comma-separated, blanks and repeats dropped', () => {
  const listen = { MASAKARI_WEBHOOK_LISTEN: '127.0.0.1:9443' };
  assert.equal(webhookSettingsFromEnv({ ...listen, MASAKARI_WEBHOOK_OPERATOR_USERS: ' admin, ,ops,admin ' }), {
    listen: { host: '127.0.0.1', port: 9443 },
    operatorUsers: ['admin', 'ops'],
  });
  assert.equal(webhookSettingsFromEnv({ ...listen, MASAKARI_WEBHOOK_OPERATOR_USERS: ' , ' }), {
    listen: { host: '127.0.0.1', port: 9443 },
  });
});

test('default trust: the pod’s service account and MASAKARI_WEBHOOK_OPERATOR_USERS; deletes from the account only', () => {
  const sa = 'system:serviceaccount:masakari:masakari-operator-api';
  assert.equal(defaultTrust({ operatorUsers: ['admin', sa] }, sa), {
    fieldManagers: Object.values(FIELD_MANAGERS),
    operatorUsers: [sa, 'admin'],
    deleters: [sa],
  });
  // outside a pod (make run, tests) only the configured names, and every delete is checked
  assert.equal(defaultTrust({ operatorUsers: ['admin'] }, undefined), {
    fieldManagers: Object.values(FIELD_MANAGERS),
    operatorUsers: ['admin'],
  });
  assert.equal(defaultTrust({}, undefined).operatorUsers, []);
});

test('the pod’s own user name comes from its service-account token', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sa-'));
  try {
    const claims = Buffer.from(JSON.stringify({ sub: 'system:serviceaccount:masakari:api' })).toString('base64url');
    await writeFile(join(dir, 'token'), `eyJhbGciOiJSUzI1NiJ9.${claims}.sig`);
    assert.is(serviceAccountUsername(join(dir, 'token')), 'system:serviceaccount:masakari:api');
    await writeFile(join(dir, 'garbage'), 'not a jwt');
    assert.is(serviceAccountUsername(join(dir, 'garbage')), undefined);
    assert.is(serviceAccountUsername(join(dir, 'absent')), undefined);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
