// The admission key out of reach of who may edit the Masakari objects: with
// admission_key_namespace set to the operator's own namespace (the chart sets
// it to the release namespace), an editor of the objects' namespace (the
// rules the built-in edit aggregates, system:aggregate-to-edit, which include
// reading and creating Secrets, plus the Masakari editor role) can neither
// read the key nor choose it by creating the Secret first. Real
// kube-apiserver with RBAC; the user is impersonated with kubectl --as.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { pino } from 'pino';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createKubeClient } from '../../../src/k8s/kube-client.ts';
import { loadAdmissionSealKey, SEAL_SECRET_NAME } from '../../../src/store/admission/seal.ts';
import { useNamespace } from '../../support/cluster.ts';
import type { TestNamespace } from '../../support/cluster.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const SUFFIX = randomBytes(3).toString('hex');
const EDITOR_ROLE = `masakari-editor-key-${SUFFIX}`;
const EDITOR = `editor-key-${SUFFIX}`;
const log = pino({ level: process.env.MASAKARI_TEST_LOG ?? 'silent' });

const test = suite<{ objects: TestNamespace; operator: TestNamespace }>('the admission key', {
  objects: undefined as unknown as TestNamespace,
  operator: undefined as unknown as TestNamespace,
});

const binding = (ns: string, clusterRole: string) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: { name: `${clusterRole}-${EDITOR}`.slice(0, 63), namespace: ns },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
  subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: EDITOR }],
});

test.before(async (ctx) => {
  ctx.objects = await useNamespace('key-objects');
  ctx.operator = await useNamespace('key-operator');
  const editor = load(readFileSync(join(ROOT, 'config', 'rbac', 'masakari_editor_role.yaml'), 'utf8')) as object;
  const r = await ctx.objects.kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { ...editor, metadata: { name: EDITOR_ROLE } },
        binding(ctx.objects.namespace, 'system:aggregate-to-edit'),
        binding(ctx.objects.namespace, EDITOR_ROLE),
      ],
    }),
  );
  assert.is(r.code, 0, r.stderr);
});

test.after(async ({ objects, operator }) => {
  await objects.kubectl(['delete', 'clusterrole', EDITOR_ROLE, '--ignore-not-found']);
  await objects.cleanup();
  await operator.cleanup();
});

test("an editor of the objects' namespace can neither read the key nor create it first", async ({
  objects,
  operator,
}) => {
  const as = (args: string[]) => objects.kubectl([`--as=${EDITOR}`, ...args]);
  // The editor's rights are real: Secrets of the objects' namespace are theirs to read and create.
  const own = await as(['auth', 'can-i', 'get', 'secrets', `--namespace=${objects.namespace}`]);
  assert.is(own.stdout.trim(), 'yes', own.stderr);

  // Before the operator first starts: pre-creating the key in the operator's namespace is refused.
  const forged = await as([
    'create',
    'secret',
    'generic',
    SEAL_SECRET_NAME,
    '--from-literal=key=0123456789abcdef0123456789abcdef',
    `--namespace=${operator.namespace}`,
  ]);
  assert.is.not(forged.code, 0, forged.stdout);
  assert.match(forged.stderr, /forbidden/i, forged.stderr);

  const kube = createKubeClient(operator.kc);
  const key = await loadAdmissionSealKey(kube, operator.namespace, log, new AbortController().signal);
  assert.ok(key && key.length >= 32, 'the operator made its key');

  const read = await as(['get', 'secret', SEAL_SECRET_NAME, '-o', 'yaml', `--namespace=${operator.namespace}`]);
  assert.is.not(read.code, 0, 'the editor read the key');
  assert.match(read.stderr, /forbidden/i, read.stderr);
  const there = await as(['get', 'secrets', '-o', 'name', `--namespace=${objects.namespace}`]);
  assert.is(there.code, 0, there.stderr);
  assert.not.match(there.stdout, SEAL_SECRET_NAME, "no key in the objects' namespace");
});

test.run();
