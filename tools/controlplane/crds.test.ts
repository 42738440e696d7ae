// Static checks of the CRDs in crds/: what kubectl users and the operator rely
// on before any API server sees them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GROUP, KINDS, VERSION } from '../../src/model/constants.ts';
import { loadCrds } from './crds.ts';
import { defaultCrdDir } from './paths.ts';

interface Schema {
  type?: string;
  description?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
}
interface Version {
  name: string;
  served: boolean;
  storage: boolean;
  subresources?: { status?: object };
  schema: { openAPIV3Schema: Schema };
}
interface Crd {
  metadata: { name: string };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string; shortNames?: string[]; categories?: string[] };
    versions: Version[];
  };
}

const crds = loadCrds(defaultCrdDir()) as unknown as Crd[];

test('every kind in constants.ts has its CRD, named <plural>.<group>', () => {
  for (const kind of Object.values(KINDS)) {
    const crd = crds.find((c) => c.spec.names.kind === kind.kind);
    assert.ok(crd, `a CRD for ${kind.kind} in crds/`);
    assert.is(crd?.spec.names.plural, kind.plural);
    assert.is(crd?.metadata.name, `${kind.plural}.${GROUP}`);
  }
});

test('every CRD is namespaced, in our group and the masakari category, with short names', () => {
  for (const crd of crds) {
    assert.is(crd.spec.group, GROUP, crd.metadata.name);
    assert.is(crd.spec.scope, 'Namespaced', crd.metadata.name);
    assert.equal(crd.spec.names.categories, ['masakari'], crd.metadata.name);
    assert.ok(crd.spec.names.shortNames?.length, `${crd.metadata.name} has short names`);
  }
});

test('short names are unique and do not shadow core resources', () => {
  const core = [
    'po',
    'svc',
    'ns',
    'no',
    'cm',
    'ev',
    'ep',
    'sa',
    'pv',
    'pvc',
    'rs',
    'rc',
    'ds',
    'deploy',
    'sts',
    'ing',
    'hpa',
    'crd',
    'pdb',
    'pc',
    'sc',
    'netpol',
    'csr',
    'limits',
    'quota',
  ];
  const all = crds.flatMap((c) => c.spec.names.shortNames ?? []);
  assert.is(new Set(all).size, all.length);
  for (const s of all) assert.not.ok(core.includes(s), s);
});

test(`a single served storage version ${VERSION} with the status subresource`, () => {
  for (const crd of crds) {
    assert.is(crd.spec.versions.length, 1);
    const [v] = crd.spec.versions;
    assert.is(v?.name, VERSION);
    assert.ok(v?.served && v.storage);
    assert.equal(v?.subresources?.status, {});
  }
});

test('every field has a description (kubectl explain)', () => {
  const missing: string[] = [];
  const walk = (s: Schema, path: string): void => {
    if (path !== '' && !/\.(apiVersion|kind|metadata)$/.test(path) && !s.description) missing.push(path);
    for (const [k, child] of Object.entries(s.properties ?? {})) walk(child, `${path}.${k}`);
    if (s.items) walk(s.items, `${path}[]`);
  };
  for (const crd of crds) walk(crd.spec.versions[0]!.schema.openAPIV3Schema, crd.spec.names.kind);
  assert.equal(missing, []);
});

test('structural: every node has a type, except where unknown fields are preserved or it is int-or-string', () => {
  const untyped: string[] = [];
  const walk = (s: Schema, path: string): void => {
    // Kubernetes' structural schema rules allow exactly these two without a type.
    if (!s.type && !s['x-kubernetes-preserve-unknown-fields'] && !s['x-kubernetes-int-or-string']) untyped.push(path);
    for (const [k, child] of Object.entries(s.properties ?? {})) walk(child, `${path}.${k}`);
    if (s.items) walk(s.items, `${path}[]`);
    if (typeof s.additionalProperties === 'object') walk(s.additionalProperties, `${path}{}`);
  };
  for (const crd of crds) walk(crd.spec.versions[0]!.schema.openAPIV3Schema, crd.spec.names.kind);
  assert.equal(untyped, []);
});

test.run();
