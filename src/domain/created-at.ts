// Masakari's created_at for a stored object, and the default order built on
// it. One definition for the facade (records), the engine (the periodic
// task's and the host lists' order), retention and the state metrics, so a
// restored object (Velero re-creates it with a new metadata.creationTimestamp)
// keeps its place everywhere.
import { ANNOTATIONS } from '../model/constants.ts';
import type { MasakariObject } from '../model/types.ts';

/**
 * created_at: Masakari's, for objects imported from Masakari; else the one
 * recorded in status at admission (it survives a backup and restore, which
 * resets metadata.creationTimestamp); else, for objects admitted before
 * status.createdAt existed, when the API server created the object.
 */
export function createdAtOf(obj: MasakariObject): string | undefined {
  return obj.metadata.annotations?.[ANNOTATIONS.createdAt] ?? recordedCreatedAt(obj);
}

/** status.createdAt, falling back to metadata.creationTimestamp. */
export function recordedCreatedAt(obj: MasakariObject): string | undefined {
  return obj.status?.createdAt || obj.metadata.creationTimestamp;
}

/** created_at in epoch ms; NaN when the object has none. */
export function createdAtMs(obj: MasakariObject): number {
  return Date.parse(createdAtOf(obj) ?? '');
}

/** Masakari's default list order (sort_key created_at, sort_dir desc), then id desc. */
export function newestFirst(a: MasakariObject, b: MasakariObject): number {
  const ta = createdAtMs(a) || 0;
  const tb = createdAtMs(b) || 0;
  if (ta !== tb) return tb - ta;
  return (b.status?.id ?? 0) - (a.status?.id ?? 0);
}
