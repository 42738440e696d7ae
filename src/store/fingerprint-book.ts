// Reading and compare-and-swap writing of a host's fingerprint book: the
// ConfigMap `fingerprints-<host uuid>` (owned by the HaHost) that serialises
// notification creation per host. See fingerprints.ts for the rule itself.
import type { KubeClient } from '../k8s/client.ts';
import { isAlreadyExists, isConflict, isNotFound } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { API_VERSION, FIELD_MANAGERS, KINDS, LABELS, MANAGED_BY } from '../model/constants.ts';
import type { HaHost } from '../model/types.ts';
import type { ConfigMap } from './configmap.ts';
import { ROLES } from './configmap.ts';
import type { FingerprintBook } from './fingerprints.ts';
import { decodeBook, encodeBook } from './fingerprints.ts';
import { fingerprintObjectName } from './names.ts';

export interface BookVersion {
  book: FingerprintBook;
  /** The ConfigMap as read; undefined when the host has no book yet. */
  object?: ConfigMap;
}

export async function readBook(kube: KubeClient, namespace: string, hostUuid: string): Promise<BookVersion> {
  try {
    const object = await kube.get<ConfigMap>(RESOURCES.configMaps, namespace, fingerprintObjectName(hostUuid));
    return { book: decodeBook(object.data), object };
  } catch (e) {
    if (isNotFound(e)) return { book: decodeBook(undefined) };
    throw e;
  }
}

/**
 * Writes `book` only if nobody wrote the host's book since `base` was read.
 * Returns the written version, or false when someone did (409 on update,
 * AlreadyExists on first create): the caller re-reads and re-checks.
 */
export async function writeBook(
  kube: KubeClient,
  namespace: string,
  host: HaHost,
  hostUuid: string,
  base: BookVersion,
  book: FingerprintBook,
): Promise<BookVersion | false> {
  const name = fingerprintObjectName(hostUuid);
  try {
    let written: ConfigMap;
    if (base.object) {
      written = await kube.replace<ConfigMap>(
        RESOURCES.configMaps,
        namespace,
        name,
        { ...base.object, data: encodeBook(book) },
        {
          fieldManager: FIELD_MANAGERS.api,
        },
      );
    } else {
      const body: ConfigMap = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name,
          labels: { [LABELS.role]: ROLES.fingerprints, [LABELS.hostUuid]: hostUuid, [LABELS.managedBy]: MANAGED_BY },
          ...(host.metadata.uid
            ? {
                ownerReferences: [
                  {
                    apiVersion: API_VERSION,
                    kind: KINDS.host.kind,
                    name: host.metadata.name ?? '',
                    uid: host.metadata.uid,
                  },
                ],
              }
            : {}),
        },
        data: encodeBook(book),
      };
      written = await kube.create<ConfigMap>(RESOURCES.configMaps, namespace, body, {
        fieldManager: FIELD_MANAGERS.api,
      });
    }
    return { book, object: written };
  } catch (e) {
    if (isConflict(e) || isAlreadyExists(e)) return false;
    throw e;
  }
}
