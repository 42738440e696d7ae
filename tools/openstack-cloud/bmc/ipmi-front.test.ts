import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cipherSuitesReply } from './ipmi-front.ts';

/** What ipmitool 1.8.19 sends first for `-I lanplus` without -C (captured from `ipmi_sim -d`). */
const ASK = Buffer.from('0600ff07060000000000000000000a002018c88104540e008099', 'hex');

const sum = (bytes: Iterable<number>) => [...bytes].reduce((a, b) => a + b, 0) & 0xff;

test('Get Channel Cipher Suites outside a session: answered with cipher suite 3 and valid IPMI checksums', () => {
  const reply = cipherSuitesReply(ASK);
  assert.ok(reply);
  assert.equal([...reply.subarray(0, 6)], [0x06, 0x00, 0xff, 0x07, 0x06, 0x00]);
  assert.is(reply.readUInt32LE(6), 0, 'no session');
  const len = reply.readUInt16LE(14);
  const ipmi = reply.subarray(16, 16 + len);
  assert.is(ipmi.length, len);
  assert.equal([...ipmi.subarray(0, 2)], [0x81, 0x1c], 'to the requester, netfn App response');
  assert.is(sum(ipmi.subarray(0, 3)), 0, 'header checksum');
  assert.is(sum(ipmi.subarray(3)), 0, 'body checksum');
  assert.equal(
    [...ipmi.subarray(3, 8)],
    [0x20, 0x04, 0x54, 0x00, 0x01],
    'same sequence, cmd 0x54, completion 0, channel 1',
  );
  assert.equal([...ipmi.subarray(8, 13)], [0xc0, 0x03, 0x01, 0x41, 0x81]);
});

test('a later list index gets an empty list (ending the client loop)', () => {
  const ask = Buffer.from(ASK);
  ask[24] = 0x81;
  ask[25] = (ask[25] ?? 0) - 1;
  const reply = cipherSuitesReply(ask);
  assert.ok(reply);
  assert.is(reply.readUInt16LE(14), 9);
});

test('any other datagram passes through: Get Channel Auth Capabilities (IPMI 1.5), an RMCP+ session message', () => {
  const authCaps = Buffer.from('0600ff0700000000000000000009201 8c881003 88e04b5'.replace(/ /g, ''), 'hex');
  assert.is(cipherSuitesReply(authCaps), undefined);
  const inSession = Buffer.from(ASK);
  inSession.writeUInt32LE(0x1234, 6);
  assert.is(cipherSuitesReply(inSession), undefined);
});

test.run();
