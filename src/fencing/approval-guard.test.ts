import { pino } from 'pino';
import { Registry } from 'prom-client';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KubeError } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { FakeKube } from '../testing/fake-kube.ts';
import { scriptedKube } from '../testing/fake-kube.ts';
import { APPROVAL_GUARD_METRIC, ApprovalGuard } from './approval-guard.ts';

const log = pino({ level: 'silent' });
const binding = (validationActions: string[]) => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  metadata: { name: 'mo-safety-overrides' },
  spec: { policyName: 'mo-safety-overrides', validationActions },
});
const metricValue = async (r: Registry) => (await r.getSingleMetric(APPROVAL_GUARD_METRIC)!.get()).values[0]?.value;

test('overrides are honoured while the binding exists and denies, and not once it is gone (within the recheck)', async () => {
  const kube = new FakeKube();
  kube.seed(RESOURCES.validatingAdmissionPolicyBindings, binding(['Deny']));
  let now = 0;
  const metrics = new Registry();
  const guard = new ApprovalGuard({ kube, bindingName: 'mo-safety-overrides', log, metrics, now: () => now });
  assert.is(await guard.unguardedReason(), undefined);
  assert.is(await metricValue(metrics), 1);

  await kube.delete(RESOURCES.validatingAdmissionPolicyBindings, undefined, 'mo-safety-overrides');
  now += 59_000;
  assert.is(await guard.unguardedReason(), undefined, 'one answer per minute');
  now += 2_000;
  const reason = await guard.unguardedReason();
  assert.match(reason ?? '', 'ValidatingAdmissionPolicyBinding mo-safety-overrides does not exist');
  assert.match(reason ?? '', 'not honoured until the binding is restored');
  assert.is(await metricValue(metrics), 0);
});

test('a binding that only warns or audits does not guard; an unreadable one neither', async () => {
  const kube = new FakeKube();
  kube.seed(RESOURCES.validatingAdmissionPolicyBindings, binding(['Warn', 'Audit']));
  const warnOnly = new ApprovalGuard({ kube, bindingName: 'mo-safety-overrides', log });
  assert.match((await warnOnly.unguardedReason()) ?? '', 'does not deny');
  const forbidden = scriptedKube({
    get: async () => {
      throw new KubeError(403, 'Forbidden', 'forbidden');
    },
  });
  const blind = new ApprovalGuard({ kube: forbidden, bindingName: 'mo-safety-overrides', log });
  assert.match((await blind.unguardedReason()) ?? '', 'cannot be read (RBAC');
});

test('no binding configured: overrides are not checked', async () => {
  const guard = new ApprovalGuard({ kube: new FakeKube(), bindingName: null, log });
  assert.is(await guard.unguardedReason(), undefined);
});

test.run();
