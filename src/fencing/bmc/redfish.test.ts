// The Redfish driver against the simulator's fake Redfish BMC: the calls on
// the wire, and each failure mapped to its BmcError kind; never "Off" from an
// answer it cannot read.
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { generateControlPlanePki } from '../../../tools/controlplane/pki.ts';
import { startFakeRedfish } from '../../../tools/simulator/redfish-bmc.ts';
import type { FakeRedfish } from '../../../tools/simulator/redfish-bmc.ts';
import { rejection } from '../../testing/expect-error.ts';
import { BmcError } from './bmc.ts';
import type { BmcFailureKind } from './bmc.ts';
import { redfishBmc } from './redfish.ts';

const t = suite('redfish driver');
let bmc: FakeRedfish;

t.before(async () => {
  bmc = await startFakeRedfish({ systems: ['cpu1'], username: 'root', password: 'calvin' });
});
t.after(() => bmc.stop());
t.before.each(() => {
  bmc.clearFaults();
  bmc.password = 'calvin';
  bmc.setPower('cpu1', 'On');
  bmc.log.length = 0;
});

const driver = (o: { password?: string; timeoutMs?: number; systemId?: string; address?: string } = {}) =>
  redfishBmc({
    address: o.address ?? bmc.url,
    systemId: o.systemId ?? 'cpu1',
    username: 'root',
    password: o.password ?? 'calvin',
    timeoutMs: o.timeoutMs ?? 2_000,
  });

const kind = async (p: Promise<unknown>, k: BmcFailureKind): Promise<BmcError> => {
  const err = await rejection(p, BmcError);
  assert.is(err.kind, k, err.message);
  return err;
};

/** A hand-written BMC that answers with `handler`, used at its address, then closed. */
async function withBmc(handler: RequestListener, use: (address: string) => Promise<void>): Promise<void> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  try {
    await use(`http://127.0.0.1:${port}`);
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

t('ForceOff through ComputerSystem.Reset, then PowerState reads Off', async () => {
  const d = driver();
  assert.is(d.describe, `redfish ${bmc.url} system cpu1`);
  assert.is(await d.powerState(), 'On');
  await d.powerOff();
  assert.is(await d.powerState(), 'Off');
  assert.equal(
    bmc.log.map((r) => [r.method, r.path, r.resetType ?? '']),
    [
      ['GET', '/redfish/v1/Systems/cpu1', ''],
      ['POST', '/redfish/v1/Systems/cpu1/Actions/ComputerSystem.Reset', 'ForceOff'],
      ['GET', '/redfish/v1/Systems/cpu1', ''],
    ],
  );
  assert.is(bmc.systems.get('cpu1')!.resets.ForceOff, 1);
});

t('wrong credentials are refused, naming the Secret to check', async () => {
  const err = await kind(driver({ password: 'wrong' }).powerOff(), 'refused');
  assert.match(err.message, 'ForceOff answered HTTP 401: Invalid username or password');
  assert.is(bmc.systems.get('cpu1')!.power, 'On');
});

t('a 500 is an error, the power unchanged', async () => {
  bmc.fault({ kind: 500, count: 2 });
  await kind(driver().powerOff(), 'error');
  const err = await kind(driver().powerState(), 'error');
  assert.match(err.message, 'HTTP 500');
  assert.is(bmc.systems.get('cpu1')!.power, 'On');
});

t('no answer within the deadline is a timeout', async () => {
  bmc.fault({ kind: 'hang', count: 1 });
  const started = Date.now();
  const err = await kind(driver({ timeoutMs: 300 }).powerState(), 'timeout');
  assert.ok(Date.now() - started < 2_000);
  assert.match(err.message, 'no answer within 0.3s');
});

t('nothing listening is unreachable', async () => {
  const closed = await startFakeRedfish({ systems: ['x'] });
  const address = closed.url;
  await closed.stop();
  await kind(driver({ address }).powerOff(), 'unreachable');
});

t('an unknown system is an error, not Off', async () => {
  const err = await kind(driver({ systemId: 'nope' }).powerState(), 'error');
  assert.match(err.message, 'HTTP 404');
});

t('a PowerState the driver does not know is an error, never Off', async () => {
  await withBmc(
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ PowerState: null }));
    },
    async (address) => {
      const err = await kind(driver({ address }).powerState(), 'error');
      assert.match(err.message, 'unknown PowerState null');
    },
  );
});

t('a lying BMC is reported as it lies: the engine polls until Off', async () => {
  const d = driver();
  await d.powerOff();
  bmc.lie('cpu1', 2, 'On');
  assert.equal([await d.powerState(), await d.powerState(), await d.powerState()], ['On', 'On', 'Off']);
});

t('a ForceOff refused as "already in that state" counts only when the BMC then reads Off', async () => {
  let power = 'Off';
  await withBmc(
    (req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'POST') {
        res.writeHead(409);
        res.end(JSON.stringify({ error: { message: 'The system is already in the requested state' } }));
        return;
      }
      res.writeHead(200);
      res.end(JSON.stringify({ PowerState: power }));
    },
    async (address) => {
      const d = driver({ address });
      await d.powerOff();
      power = 'On';
      const err = await kind(d.powerOff(), 'error');
      assert.match(err.message, 'ForceOff answered HTTP 409: The system is already in the requested state');
    },
  );
});

t('https with the CA from the Secret, refused without it, accepted with insecure', async () => {
  const pki = generateControlPlanePki();
  const tls = await startFakeRedfish({
    systems: ['s1'],
    username: 'root',
    password: 'calvin',
    tls: { key: pki.serving.keyPem, cert: pki.serving.certPem },
  });
  try {
    const base = { address: tls.url, systemId: 's1', username: 'root', password: 'calvin', timeoutMs: 2_000 };
    assert.is(await redfishBmc({ ...base, ca: pki.ca.certPem }).powerState(), 'On');
    const err = await kind(redfishBmc(base).powerState(), 'error');
    assert.match(err.message, /certificate/i);
    assert.is(await redfishBmc({ ...base, insecure: true }).powerState(), 'On');
  } finally {
    await tls.stop();
  }
});

t('a caller abort ends the call with the caller’s reason, not a BmcError', async () => {
  bmc.fault({ kind: 'hang', count: 1 });
  const ac = new AbortController();
  const p = driver({ timeoutMs: 5_000 }).powerState(ac.signal);
  setTimeout(() => ac.abort(new Error('leadership lost')), 50);
  try {
    await p;
    assert.unreachable();
  } catch (err) {
    assert.not.instance(err, BmcError);
    assert.is((err as Error).message, 'leadership lost');
  }
});

t.run();
