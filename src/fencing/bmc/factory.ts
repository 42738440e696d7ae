// The Bmc of an HaHost (spec.fencing): its driver, with the credentials (and
// for Redfish the CA) read from Secrets in the host's namespace at each
// fence, so a rotated password counts from the next attempt. A Secret that
// cannot be read is a BmcError too: `refused` when it is missing, lacks a key
// or may not be read (a person must fix it), `error` for anything a retry may
// fix; the message names the Secret and the key.

import type { KubeClient } from '../../k8s/client.ts';
import { KubeError, isNotFound } from '../../k8s/client.ts';
import { RESOURCES } from '../../k8s/resources.ts';
import type { HaHost, HostFencing } from '../../model/types.ts';
import { BmcError } from './bmc.ts';
import type { Bmc } from './bmc.ts';
import { ipmiBmc } from './ipmi.ts';
import { redfishBmc } from './redfish.ts';
import type { RedfishOptions } from './redfish.ts';

/** The CRD defaults of spec.fencing. */
export const FENCING_DEFAULTS = { timeoutSeconds: 10, powerOffTimeoutSeconds: 60, caKey: 'ca.crt' } as const;

interface SecretLike {
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

export interface BmcFactoryOptions {
  /** Test hook for Redfish (undici MockAgent). */
  dispatcher?: RedfishOptions['dispatcher'];
  /** The ipmitool binary; default from PATH. */
  ipmitool?: string;
}

async function readSecret(kube: KubeClient, namespace: string, name: string, why: string): Promise<SecretLike> {
  try {
    return await kube.get<SecretLike>(RESOURCES.secrets, namespace, name);
  } catch (err) {
    if (isNotFound(err)) throw new BmcError('refused', `${why}: Secret ${namespace}/${name} does not exist`);
    if (err instanceof KubeError && err.code === 403) {
      throw new BmcError('refused', `${why}: not allowed to read Secret ${namespace}/${name} (RBAC)`);
    }
    throw new BmcError('error', `${why}: Secret ${namespace}/${name} could not be read: ${(err as Error).message}`);
  }
}

function secretKey(secret: SecretLike, namespace: string, name: string, key: string, why: string): string {
  const encoded = secret.data?.[key];
  const value = encoded !== undefined ? Buffer.from(encoded, 'base64').toString('utf8') : secret.stringData?.[key];
  if (value === undefined || value === '') {
    throw new BmcError('refused', `${why}: Secret ${namespace}/${name} has no key ${key}`);
  }
  return value;
}

/** The Bmc to fence `host` with; throws BmcError when its Secrets cannot be read. */
export async function bmcForHost(kube: KubeClient, host: HaHost, opts: BmcFactoryOptions = {}): Promise<Bmc> {
  const f: HostFencing | undefined = host.spec.fencing;
  const namespace = host.metadata.namespace ?? '';
  if (!f) throw new BmcError('error', `HaHost ${namespace}/${host.metadata.name} has no spec.fencing`);
  const why = `fencing of host ${host.spec.name}`;
  const timeoutMs = (f.timeoutSeconds ?? FENCING_DEFAULTS.timeoutSeconds) * 1000;
  const credName = f.credentialsSecretRef.name;
  const cred = await readSecret(kube, namespace, credName, why);
  const username = secretKey(cred, namespace, credName, 'username', why);
  const password = secretKey(cred, namespace, credName, 'password', why);
  if (f.driver === 'ipmi') {
    return ipmiBmc({
      address: f.address,
      username,
      password,
      timeoutMs,
      ...(opts.ipmitool ? { ipmitool: opts.ipmitool } : {}),
    });
  }
  if (!f.systemId) throw new BmcError('error', `${why}: the redfish driver needs spec.fencing.systemId`);
  let ca: string | undefined;
  const caRef = f.tls?.caSecretRef;
  if (caRef) {
    const caSecret = caRef.name === credName ? cred : await readSecret(kube, namespace, caRef.name, why);
    ca = secretKey(caSecret, namespace, caRef.name, caRef.key ?? FENCING_DEFAULTS.caKey, why);
  }
  return redfishBmc({
    address: f.address,
    systemId: f.systemId,
    username,
    password,
    timeoutMs,
    ...(ca ? { ca } : {}),
    ...(f.tls?.insecure ? { insecure: true } : {}),
    ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}),
  });
}
