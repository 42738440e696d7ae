// The cloud of one run: 5 failed compute hosts with 20 servers each and 5
// spare hosts, named after the seed so that runs sharing a namespace never
// share a host (Masakari host names are unique per deployment).
export const FAILED_PER_RUN = 5;
export const SPARES_PER_RUN = 5;
export const SERVERS_PER_HOST = 20;

export interface Topology {
  segment: string;
  failed: string[];
  spare: string[];
}

export function topologyFor(seed: number): Topology {
  const names = (kind: string, n: number) => Array.from({ length: n }, (_, i) => `s${seed}-${kind}-${i}`);
  return { segment: `chaos-${seed}`, failed: names('failed', FAILED_PER_RUN), spare: names('spare', SPARES_PER_RUN) };
}

/** Server i of every failed host: a mix Masakari treats differently. */
export function serverShape(i: number): { ha: boolean; stopped: boolean } {
  // HA-enabled ones are evacuated first, the others after (evacuate_all_instances); stopped ones stay stopped
  return { ha: i % 5 !== 0, stopped: i % 7 === 3 };
}
