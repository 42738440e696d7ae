// The control plane's certificates, made with node:crypto alone (no openssl
// binary): a throwaway CA, a serving certificate for 127.0.0.1/localhost
// signed by it, and the RSA key pair the API server signs service-account
// tokens with. Handing the CA to the kubeconfig lets kubectl and
// @kubernetes/client-node verify TLS instead of skipping verification.
//
// Node can parse X.509 (crypto.X509Certificate) but not write it, so the
// certificate is assembled here with a minimal DER encoder (RFC 5280 layout).
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';

const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

// ------------------------------------------------------------------ DER

function derLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
}

const sequence = (...content: Buffer[]): Buffer => tlv(0x30, ...content);
const set = (...content: Buffer[]): Buffer => tlv(0x31, ...content);
const explicit = (n: number, content: Buffer): Buffer => tlv(0xa0 + n, content);
const octetString = (b: Buffer): Buffer => tlv(0x04, b);
const utf8String = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
const booleanTrue = (): Buffer => tlv(0x01, Buffer.from([0xff]));

/**
 * A non-negative DER INTEGER from big-endian bytes, minimally encoded: leading
 * zero bytes go (Go's x509 refuses "malformed serial number" otherwise), and a
 * leading 1 bit gets a 0x00 pad so the value stays positive.
 */
export function derInteger(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const value = bytes.subarray(start);
  const first = value[0] ?? 0;
  return tlv(
    0x02,
    value.length === 0 ? Buffer.from([0]) : first & 0x80 ? Buffer.concat([Buffer.from([0]), value]) : value,
  );
}

function bitString(b: Buffer, unusedBits = 0): Buffer {
  return tlv(0x03, Buffer.from([unusedBits]), b);
}

function objectId(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const [a = 0, b = 0, ...rest] = parts;
  const out: number[] = [40 * a + b];
  for (const p of rest) {
    const chunk: number[] = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

function time(d: Date): Buffer {
  // RFC 5280 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050.
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2))) : tlv(0x18, Buffer.from(iso));
}

/** KeyUsage bits (RFC 5280 4.2.1.3) encoded as a DER named bit list. */
function keyUsage(bits: number[]): Buffer {
  let value = 0;
  for (const bit of bits) value |= 0x80 >> bit;
  let unused = 0;
  while (unused < 7 && !(value & (1 << unused))) unused++;
  return bitString(Buffer.from([value]), unused);
}

function extension(oid: string, critical: boolean, value: Buffer): Buffer {
  return critical
    ? sequence(objectId(oid), booleanTrue(), octetString(value))
    : sequence(objectId(oid), octetString(value));
}

function distinguishedName(commonName: string, organization?: string): Buffer {
  const rdns = [];
  if (organization) rdns.push(set(sequence(objectId(OID.organization), utf8String(organization))));
  rdns.push(set(sequence(objectId(OID.commonName), utf8String(commonName))));
  return sequence(...rdns);
}

function ipBytes(ip: string): Buffer {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) {
    throw new Error(`pki: only IPv4 addresses are supported in subjectAltName, got ${ip}`);
  }
  return Buffer.from(parts);
}

function toPem(label: string, der: Buffer): string {
  const b64 = der.toString('base64').replace(/.{1,64}/g, '$&\n');
  return `-----BEGIN ${label}-----\n${b64}-----END ${label}-----\n`;
}

// ------------------------------------------------------------------ certificates

export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

interface Issuer {
  name: Buffer;
  key: KeyObject;
  keyId: Buffer;
}

interface CertificateRequest {
  commonName: string;
  organization?: string;
  isCa: boolean;
  dnsNames?: string[];
  ipAddresses?: string[];
  validDays: number;
  /** Absent: self-signed. */
  issuer?: Issuer;
}

interface IssuedCertificate extends KeyPairPem {
  issuer: Issuer;
}

function issueCertificate(req: CertificateRequest): IssuedCertificate {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const keyId = createHash('sha1').update(spki).digest();
  const subject = distinguishedName(req.commonName, req.organization);
  const issuer = req.issuer ?? { name: subject, key: privateKey, keyId };
  const signatureAlgorithm = sequence(objectId(OID.ecdsaWithSha256));

  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x40; // positive and a full 16 bytes, as RFC 5280 wants
  // Backdated an hour so a clock a little behind still accepts the certificate.
  const notBefore = new Date(Date.now() - 3600_000);
  const notAfter = new Date(Date.now() + req.validDays * 86400_000);

  const extensions = [
    extension(OID.basicConstraints, true, req.isCa ? sequence(booleanTrue()) : sequence()),
    // digitalSignature(0), keyEncipherment(2), keyCertSign(5), cRLSign(6)
    extension(OID.keyUsage, true, keyUsage(req.isCa ? [0, 5, 6] : [0, 2])),
    extension(OID.subjectKeyIdentifier, false, octetString(keyId)),
  ];
  if (req.issuer) extensions.push(extension(OID.authorityKeyIdentifier, false, sequence(tlv(0x80, issuer.keyId))));
  if (!req.isCa) {
    extensions.push(extension(OID.extKeyUsage, false, sequence(objectId(OID.serverAuth), objectId(OID.clientAuth))));
    const names = [
      ...(req.dnsNames ?? []).map((d) => tlv(0x82, Buffer.from(d, 'ascii'))),
      ...(req.ipAddresses ?? []).map((ip) => tlv(0x87, ipBytes(ip))),
    ];
    if (names.length) extensions.push(extension(OID.subjectAltName, false, sequence(...names)));
  }

  const tbs = sequence(
    explicit(0, derInteger(Buffer.from([2]))), // v3
    derInteger(serial),
    signatureAlgorithm,
    issuer.name,
    sequence(time(notBefore), time(notAfter)),
    subject,
    spki,
    explicit(3, sequence(...extensions)),
  );
  const signature = sign('sha256', tbs, issuer.key);
  const certificate = sequence(tbs, signatureAlgorithm, bitString(signature));
  return {
    certPem: toPem('CERTIFICATE', certificate),
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    issuer: { name: subject, key: privateKey, keyId },
  };
}

export interface ControlPlanePki {
  ca: KeyPairPem;
  serving: KeyPairPem;
  /** RSA pair for service-account token signing (--service-account-*-file). */
  serviceAccount: { publicKeyPem: string; privateKeyPem: string };
}

/** A CA, a serving certificate for the loopback API server, and the SA signing key pair. */
export function generateControlPlanePki(opts: { validDays?: number } = {}): ControlPlanePki {
  const validDays = opts.validDays ?? 365;
  const ca = issueCertificate({ commonName: 'masakari-operator-envtest-ca', isCa: true, validDays });
  const serving = issueCertificate({
    commonName: 'kube-apiserver',
    isCa: false,
    dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'],
    ipAddresses: ['127.0.0.1'],
    validDays,
    issuer: ca.issuer,
  });
  const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    ca: { certPem: ca.certPem, keyPem: ca.keyPem },
    serving: { certPem: serving.certPem, keyPem: serving.keyPem },
    serviceAccount: {
      publicKeyPem: sa.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      privateKeyPem: sa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    },
  };
}

export interface ClusterPki extends ControlPlanePki {
  /** The API server's client certificate towards kubelets (logs, exec, port-forward); group system:masters. */
  kubeletClient: KeyPairPem;
  /** The kubelet's serving certificate for nodeIp and nodeName. */
  kubeletServing: KeyPairPem;
}

/**
 * The PKI of the single-node test cluster (tools/controlplane/cluster.ts): the
 * API server is reached at the node IP by the node's components and, through
 * the `kubernetes` Service IP, by pods, so both go into its certificate.
 */
export function generateClusterPki(opts: {
  nodeIp: string;
  nodeName: string;
  serviceIp: string;
  validDays?: number;
}): ClusterPki {
  const validDays = opts.validDays ?? 30;
  const ca = issueCertificate({ commonName: 'masakari-operator-cluster-ca', isCa: true, validDays });
  const issue = (commonName: string, extra: Partial<CertificateRequest> = {}): KeyPairPem => {
    const c = issueCertificate({ commonName, isCa: false, validDays, issuer: ca.issuer, ...extra });
    return { certPem: c.certPem, keyPem: c.keyPem };
  };
  const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    ca: { certPem: ca.certPem, keyPem: ca.keyPem },
    serving: issue('kube-apiserver', {
      dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'],
      ipAddresses: ['127.0.0.1', opts.nodeIp, opts.serviceIp],
    }),
    kubeletClient: issue('kube-apiserver-kubelet-client', { organization: 'system:masters' }),
    kubeletServing: issue(opts.nodeName, { dnsNames: [opts.nodeName], ipAddresses: [opts.nodeIp] }),
    serviceAccount: {
      publicKeyPem: sa.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      privateKeyPem: sa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    },
  };
}
