// A throwaway CA and a serving certificate for 127.0.0.1 and localhost, for
// `make run` and tests (a cluster mounts cert-manager's or the chart's
// certificate instead, see tls.ts). Built with @peculiar/x509 on WebCrypto:
// no hand-written DER in the product.
// tsyringe, under @peculiar/x509, needs the Reflect metadata polyfill loaded first.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { KeyPair } from './tls.ts';
import { systemClock } from '../time/clock.ts';

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const VALID_DAYS = 365;

x509.cryptoProvider.set(webcrypto);

async function pkcs8Pem(key: webcrypto.CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

/** A positive 16-byte serial, as RFC 5280 wants. */
function serialNumber(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x40;
  return Buffer.from(bytes).toString('hex');
}

/** The CA (its PEM is the caBundle to register) and a loopback serving pair it signed; valid one year. */
export async function selfSignedKeyPair(): Promise<KeyPair & { caPem: string }> {
  // Backdated an hour so a clock a little behind still accepts the certificate.
  const notBefore = new Date(systemClock.now().getTime() - 3600_000);
  const notAfter = new Date(systemClock.now().getTime() + VALID_DAYS * 86400_000);
  const caKeys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: 'CN=masakari-operator-webhook-ca',
    notBefore,
    notAfter,
    signingAlgorithm: ALGORITHM,
    keys: caKeys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const servingKeys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const serving = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: 'CN=masakari-operator-webhook',
    issuer: ca.subject,
    notBefore,
    notAfter,
    signingAlgorithm: ALGORITHM,
    publicKey: servingKeys.publicKey,
    signingKey: caKeys.privateKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: 'dns', value: 'localhost' },
        { type: 'ip', value: '127.0.0.1' },
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(ca),
      await x509.SubjectKeyIdentifierExtension.create(servingKeys.publicKey),
    ],
  });
  return {
    cert: serving.toString('pem'),
    key: await pkcs8Pem(servingKeys.privateKey),
    caPem: ca.toString('pem'),
  };
}
