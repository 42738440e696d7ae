// POST /servers/{id}/action: the server actions Masakari and the operator
// call (evacuate, os-resetState, os-stop, os-start, lock, unlock), with Nova's
// state and lock checks (nova/compute/api.py check_instance_state,
// check_instance_lock). Evacuate, stop and start finish later, as Nova's
// conductor and computes do.

import type { SimResponse } from './router.ts';
import type { SimState } from './state.ts';
import { nowIso } from './state.ts';
import type { SimServer } from './records.ts';
import { POWER_STATE, powerStateFor } from './server-states.ts';
import type { NovaCtx } from './nova-wsgi.ts';
import { atLeast, fail, onlyKeys, requireAdmin } from './nova-wsgi.ts';

/** The server if the caller may see it; Nova answers 404 for other projects' servers. */
export function visibleServer(state: SimState, id: string, ctx: NovaCtx): SimServer {
  const s = state.servers.get(id);
  if (!s || (!ctx.admin && s.projectId !== ctx.token.projectId)) fail(404, `Instance ${id} could not be found.`);
  return s as SimServer;
}

function invalidState(action: string, id: string, attr: string, value: string | null): never {
  return fail(409, `Cannot '${action}' instance ${id} while it is in ${attr} ${value}`);
}

function checkState(s: SimServer, action: string, vmStates: string[] | null): void {
  if (vmStates && !vmStates.includes(s.vmState)) invalidState(action, s.id, 'vm_state', s.vmState);
  if (s.taskState !== null) invalidState(action, s.id, 'task_state', s.taskState);
}

function checkLock(s: SimServer, ctx: NovaCtx): void {
  // nova/compute/api.py check_instance_lock: admins may act on locked servers.
  if (s.locked && !ctx.admin) fail(409, `Instance ${s.id} is locked`);
}

export type ActionHandler = (state: SimState, server: SimServer, arg: unknown, ctx: NovaCtx) => SimResponse;

export const SERVER_ACTIONS: Record<string, ActionHandler> = {
  evacuate(state, server, arg, ctx) {
    requireAdmin(ctx, 'os_compute_api:os-evacuate');
    if (arg === null || typeof arg !== 'object' || Array.isArray(arg)) {
      return fail(
        400,
        `Invalid input for field/attribute evacuate. Value: ${JSON.stringify(arg)}. ${JSON.stringify(arg)} is not of type 'object'`,
      );
    }
    const body = arg as Record<string, unknown>;
    const allowed = ['host', 'adminPass'];
    if (!atLeast(ctx.version, 14)) allowed.push('onSharedStorage');
    if (atLeast(ctx.version, 29) && !atLeast(ctx.version, 68)) allowed.push('force');
    onlyKeys('evacuate', body, allowed);
    if (!atLeast(ctx.version, 14) && !('onSharedStorage' in body)) {
      fail(400, "Invalid input for field/attribute evacuate. Value: {}. 'onSharedStorage' is a required property");
    }
    const host = body.host;
    if (host !== undefined && (typeof host !== 'string' || host.length < 1 || host.length > 255)) {
      fail(
        400,
        `Invalid input for field/attribute host. Value: ${JSON.stringify(host)}. Expected a string of 1 to 255 characters`,
      );
    }
    if (body.force === true && !host) fail(400, "Can't force to a non-provided destination");
    if (typeof host === 'string' && !state.serviceOf(host)) fail(404, `Compute host ${host} not found.`);
    if (server.host === host) fail(400, "The target host can't be the same one.");
    checkState(server, 'evacuate', ['active', 'stopped', 'error']);
    const source = server.host ? state.serviceOf(server.host) : undefined;
    if (source && state.isUp(source)) fail(400, `Compute service of ${server.host} is still in use.`);

    // Accepted: the API marks the server rebuilding and writes the migration
    // tombstone; the conductor/scheduler/destination compute do the rest later.
    server.taskState = 'rebuilding';
    const migration = state.addMigration({
      instanceUuid: server.id,
      migrationType: 'evacuation',
      sourceCompute: server.host,
      destCompute: typeof host === 'string' ? host : null,
    });
    const wasStopped = server.vmState === 'stopped';
    // 2.95+: target_state stopped, which nova-compute's rebuild applies unless the server was in error.
    const stopAtTarget = atLeast(ctx.version, 95) && server.vmState !== 'error';
    state.schedule(state.latencies.evacuate, () => {
      if (state.servers.get(server.id) !== server) return;
      const target = state.pickTarget(migration.sourceCompute, typeof host === 'string' ? host : undefined);
      const now = nowIso();
      migration.updatedAt = now;
      if (!target) {
        // NoValidHost in the conductor: migration 'error', instance ERROR.
        migration.status = 'error';
        server.vmState = 'error';
        server.taskState = null;
      } else {
        migration.status = 'done';
        migration.destCompute = target.host;
        migration.destNode = target.host;
        server.host = target.host;
        server.node = target.host;
        server.taskState = null;
        // A stopped server is rebuilt stopped; active and error ones come back active (2.95+: active ones stopped).
        server.vmState = wasStopped || stopAtTarget ? 'stopped' : 'active';
        server.powerState = server.vmState === 'stopped' ? POWER_STATE.SHUTDOWN : POWER_STATE.RUNNING;
      }
      server.updatedAt = now;
    });
    return atLeast(ctx.version, 14) ? { status: 200 } : { status: 200, body: { adminPass: 'simulated-pass' } };
  },

  'os-resetState'(_state, server, arg, ctx) {
    requireAdmin(ctx, 'os_compute_api:os-admin-actions:reset_state');
    const state = (arg as { state?: unknown } | null)?.state;
    if (state !== 'active' && state !== 'error') {
      return fail(
        400,
        `Invalid input for field/attribute state. Value: ${String(state)}. '${String(state)}' is not one of ['active', 'error']`,
      );
    }
    server.vmState = state;
    server.taskState = null;
    return { status: 202 };
  },

  'os-stop'(state, server, _arg, ctx) {
    checkLock(server, ctx);
    checkState(server, 'stop', ['active', 'error']);
    server.taskState = 'powering-off';
    state.schedule(state.latencies.stop, () => {
      const svc = server.host ? state.serviceOf(server.host) : undefined;
      // An RPC cast to a dead compute is lost: the server stays powering-off, as in Nova.
      if (state.servers.get(server.id) !== server || !svc?.alive || server.taskState !== 'powering-off') return;
      server.vmState = 'stopped';
      server.powerState = POWER_STATE.SHUTDOWN;
      server.taskState = null;
      state.touch(server);
    });
    return { status: 202 };
  },

  'os-start'(state, server, _arg, ctx) {
    checkLock(server, ctx);
    checkState(server, 'start', ['stopped']);
    server.taskState = 'powering-on';
    state.schedule(state.latencies.start, () => {
      const svc = server.host ? state.serviceOf(server.host) : undefined;
      if (state.servers.get(server.id) !== server || !svc?.alive || server.taskState !== 'powering-on') return;
      server.vmState = 'active';
      server.powerState = powerStateFor('active');
      server.taskState = null;
      state.touch(server);
    });
    return { status: 202 };
  },

  lock(_state, server, _arg, ctx) {
    if (!server.locked) {
      server.locked = true;
      server.lockedBy = server.projectId === ctx.token.projectId ? 'owner' : 'admin';
    }
    return { status: 202 };
  },

  unlock(_state, server, _arg, ctx) {
    if (server.locked && server.lockedBy === 'admin' && !ctx.admin) {
      fail(403, "Policy doesn't allow os_compute_api:os-lock-server:unlock:unlock_override to be performed.");
    }
    server.locked = false;
    server.lockedBy = null;
    return { status: 202 };
  },
};
