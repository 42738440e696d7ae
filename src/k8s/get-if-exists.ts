// A read that treats 404 as an answer: the object does not exist (any more).
import type { KubeClient, ResourceRef } from './client.ts';
import { isNotFound } from './client.ts';

export async function getIfExists<T>(
  kube: KubeClient,
  ref: ResourceRef,
  namespace: string,
  name: string,
): Promise<T | undefined> {
  try {
    return await kube.get<T>(ref, namespace, name);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}
