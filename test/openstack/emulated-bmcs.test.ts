// The emulated BMCs of the mini cloud (tools/openstack-cloud/bmc/) against real
// Nova 34, with the clients an operator uses: a power off at a host's BMC
// (Redfish ComputerSystem.Reset ForceOff with curl-like fetch, `ipmitool -I
// lanplus chassis power off`) kills that host's nova-compute, so Nova reports
// the service down, and the BMC reports Off only once it is dead; a power on
// starts it again and Nova reports it up. A stopped BMC does not answer, a
// wrong password is refused, and a restarted one keeps the host's power.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { useCloud } from './support/cloud.ts';
import { waitFor } from './support/bmc.ts';

const run = promisify(execFile);
const test = suite('emulated BMCs linked to real Nova');

async function serviceState(host: string): Promise<string> {
  const cloud = await useCloud();
  const r = await cloud.admin('GET', `/os-services?binary=nova-compute&host=${host}`);
  return (r.body as { services: { state: string }[] }).services[0]?.state ?? '';
}

async function redfish(method: string, url: string, user: string, password: string, body?: unknown) {
  return fetch(url, {
    method,
    headers: {
      authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
}

async function ipmitool(address: string, user: string, password: string, action: string, extra: string[] = []) {
  const [host, port] = address.split(':');
  const t0 = Date.now();
  const r = await run(
    'ipmitool',
    ['-I', 'lanplus', '-H', host ?? '', '-p', port ?? '', '-U', user, '-E', ...extra, 'chassis', 'power', action],
    { env: { ...process.env, IPMI_PASSWORD: password }, timeout: 30_000 },
  ).then(
    (x) => ({ ok: true, out: x.stdout, err: x.stderr }),
    (x: { stdout?: string; stderr?: string }) => ({ ok: false, out: x.stdout ?? '', err: x.stderr ?? '' }),
  );
  return { ...r, ms: Date.now() - t0 };
}

test.before(async () => {
  await (await useCloud()).reset();
});

test.after(async () => {
  await (await useCloud()).reset();
});

test('Redfish: ForceOff kills the host (the BMC says Off only after), On brings it back; stop and wrong password', async () => {
  const cloud = await useCloud();
  const bmcs = await cloud.bmcs();
  const system = `${bmcs.redfish.url}/redfish/v1/Systems/${bmcs.redfish.systems.cpu1}`;
  const since = (await cloud.powerEvents(0)).last;
  const refused = await redfish('GET', system, bmcs.username, 'wrong');
  assert.is(refused.status, 401);
  const before = (await (await redfish('GET', system, bmcs.username, bmcs.password)).json()) as { PowerState: string };
  assert.is(before.PowerState, 'On');
  const reset = await redfish('POST', `${system}/Actions/ComputerSystem.Reset`, bmcs.username, bmcs.password, {
    ResetType: 'ForceOff',
  });
  assert.is(reset.status, 204);
  const offSeenAt = await waitFor(
    'the Redfish BMC reads Off',
    async () => {
      const s = (await (await redfish('GET', system, bmcs.username, bmcs.password)).json()) as { PowerState: string };
      return s.PowerState === 'Off' ? Date.now() : undefined;
    },
    30_000,
  );
  const [off] = (await cloud.powerEvents(since)).events;
  assert.is(off?.host, 'cpu1');
  assert.is(off?.power, 'Off');
  assert.is(off?.compute, 'killed');
  assert.ok(Date.parse(off?.at ?? '') <= offSeenAt);
  await waitFor(
    'Nova reports cpu1 down',
    async () => ((await serviceState('cpu1')) === 'down' ? true : undefined),
    60_000,
  );

  await cloud.bmcLife('redfish', 'stop');
  const unreachable = await redfish('GET', system, bmcs.username, bmcs.password).catch((e: unknown) => e);
  assert.ok(unreachable instanceof Error, 'a stopped BMC does not answer');
  await cloud.bmcLife('redfish', 'start');
  const kept = (await (await redfish('GET', system, bmcs.username, bmcs.password)).json()) as { PowerState: string };
  assert.is(kept.PowerState, 'Off', 'a restarted BMC keeps the power state');

  await cloud.bmcPower('redfish', 'cpu1', 'on');
  await waitFor(
    'Nova reports cpu1 up',
    async () => ((await serviceState('cpu1')) === 'up' ? true : undefined),
    120_000,
  );
});

test('IPMI: chassis power off kills the host, status reads off, power on brings it back; stop and wrong password', async () => {
  const cloud = await useCloud();
  const bmcs = await cloud.bmcs();
  const address = bmcs.ipmi.cpu2?.address ?? '';
  const since = (await cloud.powerEvents(0)).last;
  const status = await ipmitool(address, bmcs.username, bmcs.password, 'status');
  assert.ok(status.ok, status.err);
  assert.match(status.out, /Chassis Power is on/);
  // ipmitool asks Get Channel Cipher Suites first; unanswered, each call would take about 10 s
  assert.ok(status.ms < 5_000, `chassis power status took ${status.ms} ms`);
  const wrong = await ipmitool(address, bmcs.username, 'wrong', 'status');
  assert.not.ok(wrong.ok, 'a wrong password is refused');
  const off = await ipmitool(address, bmcs.username, bmcs.password, 'off');
  assert.ok(off.ok, off.err);
  const [event] = (await cloud.powerEvents(since)).events;
  assert.is(event?.host, 'cpu2');
  assert.is(event?.compute, 'killed');
  assert.match((await ipmitool(address, bmcs.username, bmcs.password, 'status')).out, /Chassis Power is off/);
  await waitFor(
    'Nova reports cpu2 down',
    async () => ((await serviceState('cpu2')) === 'down' ? true : undefined),
    60_000,
  );

  await cloud.bmcLife('ipmi', 'stop', 'cpu2');
  const silent = await ipmitool(address, bmcs.username, bmcs.password, 'status', ['-N', '1', '-R', '1']);
  assert.not.ok(silent.ok, 'a stopped BMC does not answer');
  await cloud.bmcLife('ipmi', 'start', 'cpu2');
  assert.match((await ipmitool(address, bmcs.username, bmcs.password, 'status')).out, /Chassis Power is off/);

  const on = await ipmitool(address, bmcs.username, bmcs.password, 'on');
  assert.ok(on.ok, on.err);
  await waitFor(
    'Nova reports cpu2 up',
    async () => ((await serviceState('cpu2')) === 'up' ? true : undefined),
    120_000,
  );
});

test.run();
