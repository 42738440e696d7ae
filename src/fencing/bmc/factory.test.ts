// bmcForHost: the driver of an HaHost's spec.fencing with its credentials
// from the Secret; a Secret that cannot be used is a BmcError that names it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KubeError } from '../../k8s/client.ts';
import { RESOURCES } from '../../k8s/resources.ts';
import type { HaHost, HostFencing } from '../../model/types.ts';
import { startFakeRedfish } from '../../../tools/simulator/redfish-bmc.ts';
import { rejection } from '../../testing/expect-error.ts';
import { FakeKube } from '../../testing/fake-kube.ts';
import { BmcError } from './bmc.ts';
import { bmcForHost } from './factory.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');

function host(fencing: HostFencing): HaHost {
  return {
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'HaHost',
    metadata: { name: 'cpu1', namespace: 'ns' },
    spec: { name: 'cpu1', type: 'COMPUTE', controlAttributes: 'x', segmentRef: { name: 'seg' }, fencing },
  } as HaHost;
}

const refusal = (p: Promise<unknown>) => rejection(p, BmcError);

async function secret(kube: FakeKube, name: string, data: Record<string, string>): Promise<void> {
  await kube.create(RESOURCES.secrets, 'ns', {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: 'ns' },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  });
}

test('a redfish host fences through its BMC with the Secret’s credentials', async () => {
  const bmc = await startFakeRedfish({ systems: ['sys-1'], username: 'root', password: 'calvin' });
  try {
    const kube = new FakeKube();
    await secret(kube, 'bmc-cpu1', { username: 'root', password: 'calvin' });
    const d = await bmcForHost(
      kube,
      host({ driver: 'redfish', address: bmc.url, systemId: 'sys-1', credentialsSecretRef: { name: 'bmc-cpu1' } }),
    );
    assert.is(d.driver, 'redfish');
    await d.powerOff();
    assert.is(await d.powerState(), 'Off');
  } finally {
    await bmc.stop();
  }
});

test('a missing Secret, or one without a key, is refused, naming it', async () => {
  const kube = new FakeKube();
  const f: HostFencing = { driver: 'ipmi', address: 'bmc', credentialsSecretRef: { name: 'absent' } };
  const missing = await refusal(bmcForHost(kube, host(f)));
  assert.is(missing.kind, 'refused');
  assert.match(missing.message, 'Secret ns/absent does not exist');
  await secret(kube, 'half', { username: 'root' });
  const half = await refusal(bmcForHost(kube, host({ ...f, credentialsSecretRef: { name: 'half' } })));
  assert.is(half.kind, 'refused');
  assert.match(half.message, 'Secret ns/half has no key password');
});

test('a CA Secret without its key is refused; the default key is ca.crt', async () => {
  const kube = new FakeKube();
  await secret(kube, 'cred', { username: 'u', password: 'p' });
  await secret(kube, 'ca', { 'tls.crt': 'x' });
  const err = await refusal(
    bmcForHost(
      kube,
      host({
        driver: 'redfish',
        address: 'https://bmc',
        systemId: '1',
        credentialsSecretRef: { name: 'cred' },
        tls: { caSecretRef: { name: 'ca' } },
      }),
    ),
  );
  assert.match(err.message, 'Secret ns/ca has no key ca.crt');
});

test('an API failure reading the Secret is an error a retry may fix', async () => {
  const kube = new FakeKube();
  kube.failNext('get', new KubeError(503, 'ServiceUnavailable', 'etcd down'));
  const err = await refusal(
    bmcForHost(kube, host({ driver: 'ipmi', address: 'bmc', credentialsSecretRef: { name: 'cred' } })),
  );
  assert.is(err.kind, 'error');
  assert.match(err.message, 'Secret ns/cred could not be read');
});

test.run();
