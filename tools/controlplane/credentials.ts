// The control plane's credentials on disk: the PKI the API server serves and
// signs service-account tokens with, and the static token file that makes the
// test client a cluster admin. Kept out of the start-up sequence because they
// are written once, before any process starts, and only read by the flags
// (command-lines.ts) and the kubeconfig.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateControlPlanePki } from './pki.ts';
import type { ControlPlanePki } from './pki.ts';

/** Where the credentials are, under the control plane's temp dir. */
export interface CredentialFiles {
  ca: string;
  servingCert: string;
  servingKey: string;
  saPub: string;
  saKey: string;
  tokens: string;
  kubeconfig: string;
}

export interface Credentials {
  pkiDir: string;
  pki: ControlPlanePki;
  files: CredentialFiles;
  /** Bearer token of user "admin" in group system:masters. */
  token: string;
}

/** Generates the PKI and the admin token and writes them to <dir>/pki (keys mode 0600). */
export function writeCredentials(dir: string): Credentials {
  const pkiDir = join(dir, 'pki');
  mkdirSync(pkiDir, { mode: 0o700 });
  const pki = generateControlPlanePki();
  const files: CredentialFiles = {
    ca: join(pkiDir, 'ca.crt'),
    servingCert: join(pkiDir, 'apiserver.crt'),
    servingKey: join(pkiDir, 'apiserver.key'),
    saPub: join(pkiDir, 'sa.pub'),
    saKey: join(pkiDir, 'sa.key'),
    tokens: join(pkiDir, 'tokens.csv'),
    kubeconfig: join(dir, 'kubeconfig'),
  };
  writeFileSync(files.ca, pki.ca.certPem);
  writeFileSync(files.servingCert, pki.serving.certPem);
  writeFileSync(files.servingKey, pki.serving.keyPem, { mode: 0o600 });
  writeFileSync(files.saPub, pki.serviceAccount.publicKeyPem);
  writeFileSync(files.saKey, pki.serviceAccount.privateKeyPem, { mode: 0o600 });
  const token = randomBytes(24).toString('hex');
  // token,user,uid,"group1,group2" — system:masters bypasses RBAC
  writeFileSync(files.tokens, `${token},admin,admin,"system:masters"\n`, { mode: 0o600 });
  return { pkiDir, pki, files, token };
}
