import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { X509Certificate, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { derInteger, generateClusterPki, generateControlPlanePki } from './pki.ts';

const pki = generateControlPlanePki({ validDays: 30 });
const ca = new X509Certificate(pki.ca.certPem);
const serving = new X509Certificate(pki.serving.certPem);

test('the CA is a self-signed CA certificate', () => {
  assert.ok(ca.ca);
  assert.ok(ca.verify(ca.publicKey));
  assert.is(ca.subject, ca.issuer);
});

test('the serving certificate is signed by the CA and is not a CA', () => {
  assert.not.ok(serving.ca);
  assert.ok(serving.verify(ca.publicKey));
  assert.ok(serving.checkIssued(ca));
});

test('the serving certificate names 127.0.0.1 and localhost, for server auth', () => {
  assert.is(serving.checkIP('127.0.0.1'), '127.0.0.1');
  assert.is(serving.checkHost('localhost'), 'localhost');
  assert.ok(serving.keyUsage?.includes('1.3.6.1.5.5.7.3.1'));
});

test('validity starts before now (clock skew) and lasts the requested days', () => {
  const from = new Date(serving.validFrom).getTime();
  const to = new Date(serving.validTo).getTime();
  assert.ok(from < Date.now());
  assert.ok(Math.abs(to - Date.now() - 30 * 86400_000) < 120_000);
});

test('the serving key matches the serving certificate', () => {
  assert.ok(serving.checkPrivateKey(createPrivateKey(pki.serving.keyPem)));
});

test('the service-account pair is RSA and its halves match', () => {
  const priv = createPrivateKey(pki.serviceAccount.privateKeyPem);
  const pub = createPublicKey(pki.serviceAccount.publicKeyPem);
  assert.is(priv.asymmetricKeyType, 'rsa');
  const sig = sign('sha256', Buffer.from('token'), priv);
  assert.ok(verify('sha256', Buffer.from('token'), pub, sig));
});

test('every call makes fresh keys', () => {
  const other = generateControlPlanePki();
  assert.is.not(other.ca.certPem, pki.ca.certPem);
  assert.is.not(other.serviceAccount.privateKeyPem, pki.serviceAccount.privateKeyPem);
});

test('DER integers are minimal and positive (Go refuses "malformed serial number" otherwise)', () => {
  const hex = (b: Buffer) => b.toString('hex');
  assert.is(hex(derInteger(Buffer.from([0x02]))), '020102');
  assert.is(hex(derInteger(Buffer.from([0x00, 0x01, 0x02]))), '02020102', 'leading zero bytes go');
  assert.is(hex(derInteger(Buffer.from([0x00, 0x80]))), '02020080', 'a zero byte stays where the sign needs it');
  assert.is(hex(derInteger(Buffer.from([0x80]))), '02020080', 'a leading 1 bit is padded');
  assert.is(hex(derInteger(Buffer.from([0x00, 0x00]))), '020100');
});

test('every certificate serial is a positive 16-byte number', () => {
  for (const cert of [ca, serving]) {
    const serial = cert.serialNumber;
    assert.is(serial.length, 32, serial);
    assert.ok(parseInt(serial.slice(0, 2), 16) >= 0x40 && parseInt(serial.slice(0, 2), 16) < 0x80, serial);
  }
});

test('the test cluster API server certificate names the node IP and the kubernetes Service IP', () => {
  const cluster = generateClusterPki({ nodeIp: '10.213.0.1', nodeName: 'node-a', serviceIp: '10.215.0.1' });
  const clusterCa = new X509Certificate(cluster.ca.certPem);
  const apiserver = new X509Certificate(cluster.serving.certPem);
  for (const ip of ['10.213.0.1', '10.215.0.1', '127.0.0.1']) assert.is(apiserver.checkIP(ip), ip);
  assert.is(apiserver.checkHost('kubernetes.default.svc'), 'kubernetes.default.svc');
  assert.ok(apiserver.checkIssued(clusterCa));
  const kubelet = new X509Certificate(cluster.kubeletServing.certPem);
  assert.is(kubelet.checkIP('10.213.0.1'), '10.213.0.1');
  assert.is(kubelet.checkHost('node-a'), 'node-a');
  // The API server's client certificate towards kubelets: group system:masters, for client auth.
  const client = new X509Certificate(cluster.kubeletClient.certPem);
  assert.match(client.subject, /O=system:masters/);
  assert.ok(client.keyUsage?.includes('1.3.6.1.5.5.7.3.2'));
  assert.ok(client.checkIssued(clusterCa));
});

test.run();
