import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCES } from '../../src/k8s/resources.ts';
import type { HaHost } from '../../src/model/types.ts';
import { FakeKube } from '../../src/testing/fake-kube.ts';
import { SimState } from '../../tools/simulator/state.ts';
import { fenceWithRedfish } from './bmc.ts';

const NS = 'bench';

async function withHost(kube: FakeKube, name: string): Promise<void> {
  await kube.create<HaHost>(RESOURCES.hosts, NS, {
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'HaHost',
    metadata: { name: `host-${name}` },
    spec: { name, type: 'COMPUTE', controlAttributes: 'SSH', segmentRef: { name: 'seg' } },
  } as unknown as HaHost);
}

const forceOff = (url: string, auth: string) =>
  fetch(`${url}/redfish/v1/Systems/compute-1/Actions/ComputerSystem.Reset`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(auth).toString('base64')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ResetType: 'ForceOff' }),
  });

test('fenceWithRedfish gives the host spec.fencing on a BMC with its Secret, failing the first N power-offs', async () => {
  const kube = new FakeKube();
  await withHost(kube, 'compute-1');
  const nova = new SimState({ hosts: ['compute-1', 'compute-2'] });
  const bmc = await fenceWithRedfish({
    kube,
    namespace: NS,
    host: 'compute-1',
    nova,
    variant: { driver: 'redfish', failures: 1 },
  });
  try {
    const host = await kube.get<HaHost>(RESOURCES.hosts, NS, 'host-compute-1');
    const fencing = host.spec.fencing!;
    assert.is(fencing.driver, 'redfish');
    assert.is(fencing.address, bmc.url);
    assert.is(fencing.systemId, 'compute-1');
    assert.is(fencing.timeoutSeconds, undefined, 'the defaults are what is measured');
    const secret = await kube.get<{ stringData?: Record<string, string>; data?: Record<string, string> }>(
      RESOURCES.secrets,
      NS,
      fencing.credentialsSecretRef.name,
    );
    const creds = secret.stringData ?? {};
    assert.is(creds.username, bmc.username);
    assert.is(creds.password, bmc.password);
    const auth = `${bmc.username}:${bmc.password}`;
    assert.is((await forceOff(bmc.url, auth)).status, 500, 'the first power-off fails');
    assert.is(nova.serviceOf('compute-1')?.alive, true);
    assert.is((await forceOff(bmc.url, auth)).status, 204, 'the next one obeys');
    assert.is(bmc.systems.get('compute-1')?.power, 'Off');
    assert.is(nova.serviceOf('compute-1')?.alive, false, "powered off, the host's nova-compute is down");
  } finally {
    await bmc.stop();
  }
});

test('fenceWithRedfish refuses a host that has no HaHost', async () => {
  const kube = new FakeKube();
  const nova = new SimState({ hosts: ['compute-1'] });
  const err = await fenceWithRedfish({
    kube,
    namespace: NS,
    host: 'compute-1',
    nova,
    variant: { driver: 'redfish', failures: 0 },
  }).then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  assert.match(err?.message ?? '', 'no HaHost compute-1');
});

test.run();
