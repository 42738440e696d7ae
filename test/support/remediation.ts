// MasakariRemediation helpers of the remediator's integration tests
// (test/integration/remediation/, test/integration/detection/remediation-return.test.ts):
// reading one, and waiting for the states the tests look for.
import * as assert from 'uvu/assert';
import { eventually } from './eventually.ts';
import type { TestNamespace } from './cluster.ts';
import type { KubeClient } from '../../src/k8s/client.ts';
import { REMEDIATION_RESOURCES } from '../../src/k8s/resources.ts';
import type { MasakariRemediation } from '../../src/model/remediation-types.ts';
import type { Condition } from '../../src/model/types.ts';

type Env = { kube: KubeClient; ns: TestNamespace };

/** A condition of an object's status. */
export const conditionOf = (r: { status?: { conditions?: Condition[] } } | undefined, type: string) =>
  r?.status?.conditions?.find((c) => c.type === type);

/** A MasakariRemediation of the env's namespace. */
export const getRemediation = (env: Env, name: string) =>
  env.kube.get<MasakariRemediation>(REMEDIATION_RESOURCES.remediations, env.ns.namespace, name);

/** Waits until the MasakariRemediation `name` satisfies `ok` (30 s unless told) and returns it. */
export const remediationWhen = (
  env: Env,
  name: string,
  what: string,
  ok: (r: MasakariRemediation) => boolean,
  timeoutMs?: number,
) => eventually(what, () => getRemediation(env, name), ok, timeoutMs);

/** Waits (60 s unless told) until the remediation's Succeeded condition is decided, and fails unless it is True. */
export async function succeededRemediation(env: Env, name: string, timeoutMs = 60_000): Promise<MasakariRemediation> {
  const decided = (r: MasakariRemediation) => ['True', 'False'].includes(conditionOf(r, 'Succeeded')?.status ?? '');
  const done = await remediationWhen(env, name, 'Succeeded decided', decided, timeoutMs);
  assert.is(conditionOf(done, 'Succeeded')?.status, 'True', JSON.stringify(done.status));
  return done;
}

/** Waits until the remediation waits for proof of fencing (Processing reason WaitingForFencing) and returns it. */
export const waitingForFencing = (env: Env, name: string, what = 'WaitingForFencing') =>
  remediationWhen(env, name, what, (r) => conditionOf(r, 'Processing')?.reason === 'WaitingForFencing');
