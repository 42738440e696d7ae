// The fenced variant of the end-to-end recovery benchmark: the failed host
// gets spec.fencing on the simulator's fake Redfish BMC, linked to the
// simulated Nova (a power-off takes that host's nova-compute down), with its
// credentials Secret, as an operator would set it with kubectl. Written
// before etcd's "before" reading, so only the recovery's own writes count.
import type { KubeClient } from '../../src/k8s/client.ts';
import { RESOURCES } from '../../src/k8s/resources.ts';
import type { HaHost, HostFencing } from '../../src/model/types.ts';
import { linkToNova, startFakeRedfish } from '../../tools/simulator/redfish-bmc.ts';
import type { FakeRedfish } from '../../tools/simulator/redfish-bmc.ts';
import type { SimState } from '../../tools/simulator/state.ts';
import type { FencingVariant } from './write-volume.ts';

const SECRET = 'bench-bmc-credentials';
const USERNAME = 'bench';
const PASSWORD = 'bench-bmc-password';

export async function fenceWithRedfish(o: {
  kube: KubeClient;
  namespace: string;
  host: string;
  nova: SimState;
  variant: FencingVariant;
}): Promise<FakeRedfish> {
  const bmc = await startFakeRedfish({ systems: [o.host], username: USERNAME, password: PASSWORD });
  try {
    linkToNova(bmc, o.nova);
    await o.kube.create(RESOURCES.secrets, o.namespace, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: SECRET },
      stringData: { username: USERNAME, password: PASSWORD },
    });
    const hosts = await o.kube.list<HaHost>(RESOURCES.hosts, o.namespace);
    const h = hosts.items.find((x) => x.spec.name === o.host);
    if (!h?.metadata.name) throw new Error(`no HaHost ${o.host}`);
    // The defaults of timeoutSeconds and powerOffTimeoutSeconds: the write volume of a default setup.
    const fencing: HostFencing = {
      driver: 'redfish',
      address: bmc.url,
      systemId: o.host,
      credentialsSecretRef: { name: SECRET },
    };
    await o.kube.mergePatch(RESOURCES.hosts, o.namespace, h.metadata.name, { spec: { fencing } });
    if (o.variant.failures > 0) bmc.fault({ kind: 500, count: o.variant.failures, method: 'POST' });
    return bmc;
  } catch (err) {
    await bmc.stop();
    throw err;
  }
}
