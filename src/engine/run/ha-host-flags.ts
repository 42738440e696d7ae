// Masakari's host flags (on_maintenance, reserved) as the engine writes them:
// into HaHost status, never spec. The status values are the effective ones
// only while status.flagsGeneration equals metadata.generation (a newer spec,
// i.e. a person's later intent, overrides what the engine latched), so every
// write latches BOTH flags together with the current generation.

import type { Logger } from 'pino';
import type { KubeClient } from '../../k8s/client.ts';
import { isConflict, isNotFound } from '../../k8s/client.ts';
import { RESOURCES } from '../../k8s/resources.ts';
import { FIELD_MANAGERS } from '../../model/constants.ts';
import type { HaHost } from '../../model/types.ts';
import { effectiveFlags } from '../../domain/host-flags.ts';
import { INDEX } from '../../model/indexes.ts';
import type { Informer } from '../../runtime/types.ts';
import type { HostFlags } from '../workflows/context.ts';
import { isTransient } from '../../k8s/client.ts';
import { backoffDelay, TRANSIENT_BACKOFF } from '../../k8s/retry-on-conflict.ts';
import type { Clock } from '../../time/clock.ts';
import { rfc3339Seconds } from '../../time/format.ts';
import { newestFirst } from '../../domain/created-at.ts';

const MAX_CONFLICTS = 20;

export class HostNotFoundError extends Error {}

export class HaHostFlags implements HostFlags {
  constructor(
    private readonly deps: {
      kube: KubeClient;
      namespace: string;
      hosts: Informer<HaHost>;
      clock: Clock;
      log: Logger;
      signal?: AbortSignal;
    },
  ) {}

  setOnMaintenance(hostName: string, unreserve: boolean): Promise<void> {
    // Masakari: on_maintenance = True and, for a host failure when the host itself is reserved,
    // reserved = False; one save. A process failure keeps the reserved flag.
    return this.write(hostName, (cur) => ({ onMaintenance: true, reserved: unreserve ? false : cur.reserved }));
  }

  setReserved(hostName: string, reserved: boolean): Promise<void> {
    return this.write(hostName, (cur) => ({ onMaintenance: cur.onMaintenance, reserved }));
  }

  reservedHosts(segmentUuid: string): string[] {
    return this.deps.hosts
      .list()
      .filter((h) => h.status?.uuid && h.status.segmentUuid === segmentUuid && !h.metadata.deletionTimestamp)
      .filter((h) => {
        const f = effectiveFlags(h);
        return f.reserved && !f.onMaintenance;
      })
      .sort(newestFirst)
      .map((h) => h.spec.name);
  }

  private find(hostName: string): HaHost {
    const h = this.deps.hosts.byIndex(INDEX.name, hostName)[0];
    if (!h) throw new HostNotFoundError(`Host with name ${hostName} could not be found.`);
    return h;
  }

  private async write(
    hostName: string,
    next: (current: { reserved: boolean; onMaintenance: boolean }) => { reserved: boolean; onMaintenance: boolean },
  ): Promise<void> {
    let host = this.find(hostName);
    let conflicts = 0;
    let transient = 0;
    for (;;) {
      this.deps.signal?.throwIfAborted();
      const flags = next(effectiveFlags(host));
      const body: HaHost = structuredClone(host);
      body.status = {
        ...body.status,
        ...flags,
        flagsGeneration: host.metadata.generation ?? 1,
        updatedAt: rfc3339Seconds(this.deps.clock.now()),
      };
      try {
        const stored = await this.deps.kube.replaceStatus<HaHost>(
          RESOURCES.hosts,
          this.deps.namespace,
          host.metadata.name ?? '',
          body,
          {
            fieldManager: FIELD_MANAGERS.engine,
          },
        );
        this.deps.hosts.upsertLocal(stored);
        this.deps.log.info(
          { host: hostName, ...flags },
          flags.onMaintenance ? `Set host ${hostName} on maintenance.` : 'host flags updated',
        );
        return;
      } catch (err) {
        if (isNotFound(err)) throw new HostNotFoundError(`Host with name ${hostName} could not be found.`);
        if (isConflict(err) && ++conflicts <= MAX_CONFLICTS) {
          host = await this.deps.kube.get<HaHost>(RESOURCES.hosts, this.deps.namespace, host.metadata.name ?? '');
          continue;
        }
        if (isTransient(err) && ++transient < TRANSIENT_BACKOFF.steps) {
          await this.deps.clock.sleep(backoffDelay(TRANSIENT_BACKOFF, transient - 1), this.deps.signal);
          continue;
        }
        throw err;
      }
    }
  }
}
