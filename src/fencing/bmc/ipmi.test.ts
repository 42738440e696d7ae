// The IPMI driver against a fake ipmitool on PATH: the command line it runs
// (lanplus, -E, never the password), the status it parses, and ipmitool's
// failures mapped to BmcError kinds.
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { rejection } from '../../testing/expect-error.ts';
import { installFakeIpmitool } from '../../testing/fake-ipmitool.ts';
import type { FakeIpmitool } from '../../testing/fake-ipmitool.ts';
import { BmcError } from './bmc.ts';
import type { BmcFailureKind } from './bmc.ts';
import { classifyIpmiFailure, ipmiBmc, parseChassisPower, parseIpmiAddress } from './ipmi.ts';

const t = suite('ipmi driver');
let fake: FakeIpmitool;
let savedPath: string | undefined;

t.before(() => {
  fake = installFakeIpmitool();
  savedPath = process.env.PATH;
  // on PATH, as the engine finds it
  process.env.PATH = `${fake.dir}:${process.env.PATH ?? ''}`;
});
t.after(() => {
  process.env.PATH = savedPath;
  fake.remove();
});
t.before.each(() => fake.reset());

const mode = (m: Parameters<FakeIpmitool['mode']>[0]) => fake.mode(m);
const driver = (timeoutMs = 2_000) =>
  ipmiBmc({ address: '10.0.0.9:6230', username: 'admin', password: 's3cret pass', timeoutMs });

async function kind(p: Promise<unknown>, k: BmcFailureKind): Promise<BmcError> {
  const err = await rejection(p, BmcError);
  assert.is(err.kind, k, err.message);
  return err;
}

t('chassis power off, then status reads off; the password only in the environment', async () => {
  const d = driver();
  assert.is(d.describe, 'ipmi 10.0.0.9:6230');
  assert.is(await d.powerState(), 'On');
  await d.powerOff();
  assert.is(await d.powerState(), 'Off');
  const argv = fake.argv();
  assert.equal(argv, [
    '-I lanplus -H 10.0.0.9 -p 6230 -U admin -E chassis power status',
    '-I lanplus -H 10.0.0.9 -p 6230 -U admin -E chassis power off',
    '-I lanplus -H 10.0.0.9 -p 6230 -U admin -E chassis power status',
  ]);
  assert.not.match(argv.join(' '), 's3cret');
  assert.equal(fake.passwords(), Array(3).fill('s3cret pass'));
});

t('a rejected login is refused', async () => {
  mode('refused');
  const err = await kind(driver().powerOff(), 'refused');
  assert.match(err.message, 'unauthorized name');
});

t('no session is unreachable', async () => {
  mode('unreachable');
  await kind(driver().powerState(), 'unreachable');
});

t('a run past its deadline is killed: timeout', async () => {
  mode('hang');
  const started = Date.now();
  await kind(driver(300).powerState(), 'timeout');
  assert.ok(Date.now() - started < 5_000);
});

t('a status that does not parse is an error, never Off', async () => {
  mode('garbage');
  const err = await kind(driver().powerState(), 'error');
  assert.match(err.message, 'lukewarm');
});

t('no ipmitool installed is an error naming the package', async () => {
  const d = ipmiBmc({
    address: 'h',
    username: 'u',
    password: 'p',
    timeoutMs: 1_000,
    ipmitool: join(fake.dir, 'absent'),
  });
  const err = await kind(d.powerState(), 'error');
  assert.match(err.message, 'Debian package ipmitool');
});

t('addresses: host, host:port, [v6]:port; the default port is 623', () => {
  assert.equal(parseIpmiAddress('bmc-1'), { host: 'bmc-1', port: 623 });
  assert.equal(parseIpmiAddress('10.0.0.5:6231'), { host: '10.0.0.5', port: 6231 });
  assert.equal(parseIpmiAddress('[fd00::5]:6231'), { host: 'fd00::5', port: 6231 });
  assert.equal(parseIpmiAddress('[fd00::5]'), { host: 'fd00::5', port: 623 });
  assert.throws(() => parseIpmiAddress('a:b:c'), /not host, host:port/);
  assert.throws(() => parseIpmiAddress('h:99999'), /not host, host:port/);
});

t('status and stderr parsing', () => {
  assert.is(parseChassisPower('Chassis Power is off\n'), 'Off');
  assert.is(parseChassisPower('Chassis Power is on'), 'On');
  assert.is(parseChassisPower(''), undefined);
  assert.is(
    classifyIpmiFailure('Error: Unable to establish IPMI v2 / RMCP+ session\nRAKP 2 HMAC is invalid'),
    'refused',
  );
  assert.is(classifyIpmiFailure('Error: Unable to establish IPMI v2 / RMCP+ session'), 'unreachable');
  assert.is(classifyIpmiFailure('Set Chassis Power Control to Down/Off failed: Node busy'), 'error');
});

t.run();
