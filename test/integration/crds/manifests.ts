// Manifest builders shared by the CRD tests: the smallest valid object of each
// kind, with overrides, as YAML for `kubectl apply -f -`.
import { dump } from 'js-yaml';
import { API_VERSION } from '../../../src/model/constants.ts';

type Spec = Record<string, unknown>;

export const segment = (name: string, spec: Spec = {}) => ({
  apiVersion: API_VERSION,
  kind: 'FailoverSegment',
  metadata: { name },
  spec: { name, recoveryMethod: 'auto', serviceType: 'COMPUTE', ...spec },
});

export const host = (name: string, segmentName: string, spec: Spec = {}) => ({
  apiVersion: API_VERSION,
  kind: 'HaHost',
  metadata: { name },
  spec: { name, segmentRef: { name: segmentName }, type: 'COMPUTE', controlAttributes: 'SSH', ...spec },
});

export const notification = (name: string, spec: Spec = {}) => ({
  apiVersion: API_VERSION,
  kind: 'Notification',
  metadata: { name },
  spec: {
    type: 'COMPUTE_HOST',
    hostname: 'compute-1',
    generatedTime: '2026-11-29T10:00:00Z',
    payload: { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
    ...spec,
  },
});

export const yaml = (...objects: object[]): string => objects.map((o) => dump(o)).join('---\n');

/** Column headers of a `kubectl get` table (split on runs of 2+ spaces). */
export const headers = (table: string): string[] => (table.split('\n')[0] ?? '').trim().split(/\s{2,}/);

/** The row whose first cell is name, as header → cell. */
export function row(table: string, name: string): Record<string, string> {
  const lines = table.trimEnd().split('\n');
  const head = lines[0] ?? '';
  // cells start where their header starts (kubectl aligns columns; a cell may be empty)
  const starts = [...head.matchAll(/\S+(?: \S+)*/g)].map((m) => ({ name: m[0], at: m.index }));
  const line = lines.find((l) => l.split(/\s+/)[0] === name);
  if (!line) throw new Error(`no row ${name} in:\n${table}`);
  const cells: Record<string, string> = {};
  starts.forEach((s, i) => {
    const end = starts[i + 1]?.at ?? line.length;
    cells[s.name] = line.slice(s.at, end).trim();
  });
  return cells;
}
