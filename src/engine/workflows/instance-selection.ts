// Which servers a host recovery moves, and in which order: Masakari's
// `PrepareHAEnabledInstancesTask._filter_instances`
// (masakari/engine/drivers/taskflow/host_failure.py) plus OpenKeel's
// selectors (tagged flavors, images and aggregates, name exclusion, a
// priority order; all off by default). Kept apart from the tasks because it
// is the one policy an operator tunes (docs/operations.md, "Which servers
// recover"); PrepareHAEnabledInstancesTask (host-failure-tasks.ts) is the
// only caller, so the selection is decided once per recovery.

import type { NovaServer } from '../../openstack/types.ts';
import { NovaError, NovaNotFound } from '../../openstack/types.ts';
import type { WorkflowContext } from './context.ts';
import { RecoveryFailed } from './context.ts';

const call = (ctx: WorkflowContext) => ({ requestId: ctx.requestId, signal: ctx.signal });

/** Masakari's strutils.bool_from_string for metadata values. */
export function isTrueish(value: string | undefined): boolean {
  return value !== undefined && ['1', 't', 'true', 'on', 'y', 'yes'].includes(value.trim().toLowerCase());
}

/**
 * Whether a server is picked by a selector beyond Masakari's metadata key
 * (OpenKeel extensions, after Red Hat InstanceHA's instanceha.py
 * is_server_evacuable): the embedded flavor's extra spec (microversion >= 2.47
 * shows it) or the Glance image's property named evacuable_tag, set true.
 * Images are read once per recovery (`images` is the run's cache); an image
 * Glance no longer has tags nothing, any other failure fails the recovery:
 * it cannot tell which servers to move.
 */
async function taggedEvacuable(
  ctx: WorkflowContext,
  server: NovaServer,
  images: Map<string, Promise<boolean>>,
): Promise<boolean> {
  const { evacuable_tag: tag, tagged_flavors, tagged_images } = ctx.config.host_failure;
  if (tagged_flavors && isTrueish(server.flavor?.extra_specs?.[tag])) return true;
  if (!tagged_images || !server.image) return false;
  const imageId = server.image.id;
  let tagged = images.get(imageId);
  if (!tagged) {
    tagged = ctx.nova.getImage(imageId, call(ctx)).then(
      (image) => isTrueish(typeof image[tag] === 'string' ? image[tag] : undefined),
      (err: unknown) => {
        if (err instanceof NovaNotFound) return false;
        // A cancelled run (lost lease, expiry) keeps its own error; only Glance's answer is reworded.
        if (!(err instanceof NovaError) || ctx.signal.aborted) throw err;
        throw new RecoveryFailed(
          `Could not read image '${imageId}' of instance '${server.id}' to check its '${tag}' property: ${err.message}`,
        );
      },
    );
    images.set(imageId, tagged);
  }
  return tagged;
}

/** The name pattern of skip_servers_with_name a server's name matches, if any. */
export function skipPattern(patterns: readonly RegExp[], name: string): RegExp | undefined {
  return patterns.find((re) => re.test(name));
}

/** priority_metadata_key's value: an integer, else 0. */
export function recoveryPriority(server: NovaServer, key: string): number {
  const raw = server.metadata?.[key]?.trim();
  return raw !== undefined && /^[+-]?\d{1,15}$/.test(raw) ? Number(raw) : 0;
}

/** Higher priority first; a stable sort, so equal priorities keep the order they came in. */
export function orderByPriority(servers: readonly NovaServer[], key: string | null): NovaServer[] {
  if (key === null) return [...servers];
  return servers
    .map((server, index) => ({ server, index, priority: recoveryPriority(server, key) }))
    .sort((a, b) => b.priority - a.priority || a.index - b.index)
    .map((e) => e.server);
}

/**
 * Masakari's `_filter_instances`: HA-enabled first, then (evacuate_all_instances)
 * the others. A server counts as HA-enabled when its ha_enabled_instance_metadata_key
 * is true or a tagged flavor or image selects it; a name matching
 * skip_servers_with_name is never evacuated; priority_metadata_key reorders the
 * result, higher first.
 */
export async function selectInstances(ctx: WorkflowContext, servers: NovaServer[]): Promise<NovaServer[]> {
  const task = 'PrepareHAEnabledInstancesTask';
  const {
    ha_enabled_instance_metadata_key: haKey,
    ignore_instances_in_error_state,
    evacuate_all_instances,
    skip_servers_with_name,
    priority_metadata_key,
  } = ctx.config.host_failure;
  const images = new Map<string, Promise<boolean>>();
  const ha: NovaServer[] = [];
  const nonHa: NovaServer[] = [];
  for (const server of servers) {
    const skip = skipPattern(skip_servers_with_name, server.name);
    if (skip) {
      const msg = `Skipping recovery of instance '${server.id}' as its name '${server.name}' matches skip_servers_with_name pattern '${skip.source}'.`;
      ctx.log.info(msg);
      await ctx.progress.update(task, msg, 0.4);
      continue;
    }
    const haEnabled = isTrueish(server.metadata?.[haKey]) || (await taggedEvacuable(ctx, server, images));
    if (ignore_instances_in_error_state && server['OS-EXT-STS:vm_state'] === 'error') {
      if (haEnabled) {
        const msg = `Ignoring recovery of HA_Enabled instance '${server.id}' as it is in 'error' state.`;
        ctx.log.info(msg);
        await ctx.progress.update(task, msg, 0.4);
      }
      continue;
    }
    (haEnabled ? ha : nonHa).push(server);
  }
  await ctx.progress.update(task, `Total HA Enabled instances count: '${ha.length}'`, 0.6);
  if (!evacuate_all_instances) return orderByPriority(ha, priority_metadata_key);
  await ctx.progress.update(task, `Total Non-HA Enabled instances count: '${nonHa.length}'`, 0.7);
  const all = [...ha, ...nonHa];
  await ctx.progress.update(
    task,
    `All instances (HA Enabled/Non-HA Enabled) should be considered for evacuation. Total count is: '${all.length}'`,
    0.8,
  );
  return orderByPriority(all, priority_metadata_key);
}

/**
 * tagged_aggregates (OpenKeel extension, InstanceHA's TAGGED_AGGREGATES):
 * the aggregate holding the failed host whose evacuable_tag metadata is true,
 * or undefined. One GET /os-aggregates per recovery.
 */
export async function taggedAggregateOf(ctx: WorkflowContext, host: string): Promise<string | undefined> {
  const tag = ctx.config.host_failure.evacuable_tag;
  const aggregates = await ctx.nova.listAggregates(call(ctx));
  return aggregates.find((a) => a.hosts.includes(host) && isTrueish(a.metadata?.[tag]))?.name;
}
