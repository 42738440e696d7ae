// Test and demo control API under /_sim/ (JSON in, JSON out). Errors are
// {"error": "<message>"} with a 4xx status. Routes:
//   GET    /_sim/state                     everything, as the simulator sees it
//   POST   /_sim/hosts                     {name, zone?}            add a compute host (service up, enabled)
//   DELETE /_sim/hosts/{name}
//   POST   /_sim/hosts/{name}/fail         {forced_down?}           the compute dies: service state down
//   POST   /_sim/hosts/{name}/recover      {forced_down?, enable?}  the compute is back
//   POST   /_sim/servers                   {id?, name, host, metadata?, vm_state?, task_state?, project_id?, locked?,
//                                            image_id?, flavor_extra_specs?}
//   PATCH  /_sim/servers/{id}              {vm_state?, task_state?, metadata?, locked?, host?}
//   DELETE /_sim/servers/{id}
//   POST   /_sim/aggregates                {name, hosts?, availability_zone?, metadata?}
//   POST   /_sim/images                    {id?, name, properties?}  a Glance image (GET /image/v2/images/{id})
//   GET|POST|DELETE /_sim/faults           {method?, path, action?, count?, kind: 500|503|'hang'|'reset', when?: 'before'|'after'}
//   GET    /_sim/holds                     {rules, held}: requests held on their way in (holds.ts)
//   POST   /_sim/holds                     {method?, path, action?, count?}  hold the next matching requests
//   POST   /_sim/holds/release             {id?}                    let one (or every) held request through
//   DELETE /_sim/holds                     drop the hold rules, let every held request through
//   GET|PUT /_sim/latencies                {evacuate?, stop?, start?, api?} in ms
//   GET    /_sim/counters                  {actions: accepted per action and server, calls: all calls}
//   GET|DELETE /_sim/requests              recent Keystone/Nova requests (request id, microversion, status)
//   POST   /_sim/tokens/revoke             forget every issued token (clients must log in again)
//   PUT    /_sim/catalog                   {masakari_url}  instance-ha endpoint for tokens issued from now on
//   POST   /_sim/reset                     back to the start options

import type { SimRequest, SimResponse } from './router.ts';
import { BAD_JSON, Router } from './router.ts';
import type { SimState } from './state.ts';
import type { SimFault, SimLatencies, SimServerInput } from './records.ts';
import type { SimHoldRule } from './holds.ts';
import { SimError } from './state.ts';
import { powerStateFor } from './server-states.ts';

function bad(message: string): never {
  throw new SimError(400, message);
}

function body(req: SimRequest): Record<string, unknown> {
  if (req.body === undefined) return {};
  if (req.body === BAD_JSON || req.body === null || typeof req.body !== 'object' || Array.isArray(req.body)) {
    bad('request body must be a JSON object');
  }
  return req.body as Record<string, unknown>;
}

function optString(b: Record<string, unknown>, key: string): string | undefined {
  const v = b[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') bad(`${key} must be a string`);
  return v as string;
}

function optBool(b: Record<string, unknown>, key: string): boolean | undefined {
  const v = b[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'boolean') bad(`${key} must be a boolean`);
  return v as boolean;
}

function optMetadata(b: Record<string, unknown>, key = 'metadata'): Record<string, string> | undefined {
  const v = b[key];
  if (v === undefined) return undefined;
  if (!v || typeof v !== 'object' || Array.isArray(v) || Object.values(v).some((x) => typeof x !== 'string')) {
    bad(`${key} must be an object of strings`);
  }
  return v as Record<string, string>;
}

export function snapshot(state: SimState): unknown {
  return {
    hosts: [...state.services.values()].map((s) => ({
      host: s.host,
      uuid: s.uuid,
      zone: s.zone,
      status: s.disabled ? 'disabled' : 'enabled',
      disabled_reason: s.disabledReason,
      state: state.isUp(s) ? 'up' : 'down',
      alive: s.alive,
      forced_down: s.forcedDown,
    })),
    servers: [...state.servers.values()],
    aggregates: [...state.aggregates.values()],
    migrations: state.migrations,
    latencies: state.latencies,
    faults: state.faults,
  };
}

export function controlRouter(state: SimState): Router {
  const r = new Router();
  const ok = (b: unknown, status = 200): SimResponse => ({ status, body: b });

  r.add('GET', '/state', () => ok(snapshot(state)));
  r.add('POST', '/reset', () => {
    state.reset();
    return { status: 204 };
  });

  r.add('POST', '/hosts', (req) => {
    const b = body(req);
    const name = optString(b, 'name') ?? bad('name is required');
    return ok(state.addHost(name, optString(b, 'zone') ?? 'nova'), 201);
  });
  r.add('DELETE', '/hosts/:name', (_req, { name }) => {
    state.removeHost(name as string);
    return { status: 204 };
  });
  r.add('POST', '/hosts/:name/fail', (req, { name }) => {
    const forcedDown = optBool(body(req), 'forced_down');
    return ok(state.failHost(name as string, forcedDown === undefined ? {} : { forcedDown }));
  });
  r.add('POST', '/hosts/:name/recover', (req, { name }) => {
    const b = body(req);
    const forcedDown = optBool(b, 'forced_down');
    const enable = optBool(b, 'enable');
    return ok(
      state.recoverHost(name as string, {
        ...(forcedDown !== undefined ? { forcedDown } : {}),
        ...(enable !== undefined ? { enable } : {}),
      }),
    );
  });

  r.add('POST', '/servers', (req) => {
    const b = body(req);
    const input: SimServerInput = {
      name: optString(b, 'name') ?? bad('name is required'),
      host: optString(b, 'host') ?? bad('host is required'),
    };
    const id = optString(b, 'id');
    const vmState = optString(b, 'vm_state');
    const projectId = optString(b, 'project_id');
    const metadata = optMetadata(b);
    const locked = optBool(b, 'locked');
    if (id !== undefined) input.id = id;
    if (vmState !== undefined) input.vm_state = vmState;
    if ('task_state' in b) input.task_state = optString(b, 'task_state') ?? null;
    if (projectId !== undefined) input.project_id = projectId;
    if (metadata !== undefined) input.metadata = metadata;
    if (locked !== undefined) input.locked = locked;
    const imageId = optString(b, 'image_id');
    if (imageId !== undefined) input.image_id = imageId;
    const extraSpecs = optMetadata(b, 'flavor_extra_specs');
    if (extraSpecs !== undefined) input.flavor_extra_specs = extraSpecs;
    return ok(state.addServer(input), 201);
  });
  r.add('PATCH', '/servers/:id', (req, { id }) => {
    const server = state.servers.get(id as string);
    if (!server) throw new SimError(404, `server ${id} not found`);
    const b = body(req);
    const vmState = optString(b, 'vm_state');
    if (vmState !== undefined) {
      server.vmState = vmState;
      server.powerState = powerStateFor(vmState);
    }
    if ('task_state' in b) server.taskState = optString(b, 'task_state') ?? null;
    const metadata = optMetadata(b);
    if (metadata !== undefined) server.metadata = { ...metadata };
    const locked = optBool(b, 'locked');
    if (locked !== undefined) {
      server.locked = locked;
      server.lockedBy = locked ? 'admin' : null;
    }
    const host = optString(b, 'host');
    if (host !== undefined) {
      state.mustService(host);
      server.host = host;
      server.node = host;
    }
    state.touch(server);
    return ok(server);
  });
  r.add('DELETE', '/servers/:id', (_req, { id }) => {
    state.removeServer(id as string);
    return { status: 204 };
  });

  r.add('POST', '/aggregates', (req) => {
    const b = body(req);
    const hosts = b.hosts;
    if (hosts !== undefined && (!Array.isArray(hosts) || hosts.some((h) => typeof h !== 'string'))) {
      bad('hosts must be a list of strings');
    }
    return ok(
      state.addAggregate({
        name: optString(b, 'name') ?? bad('name is required'),
        hosts: (hosts as string[] | undefined) ?? [],
        availability_zone: optString(b, 'availability_zone') ?? null,
        metadata: optMetadata(b) ?? {},
      }),
      201,
    );
  });
  r.add('POST', '/images', (req) => {
    const b = body(req);
    const id = optString(b, 'id');
    return ok(
      state.addImage({
        ...(id !== undefined ? { id } : {}),
        name: optString(b, 'name') ?? bad('name is required'),
        properties: optMetadata(b, 'properties') ?? {},
      }),
      201,
    );
  });

  r.add('GET', '/faults', () => ok({ faults: state.faults }));
  r.add('POST', '/faults', (req) => {
    const b = body(req);
    const path = optString(b, 'path') ?? bad('path is required (e.g. /compute/v2.1/servers)');
    const kind = b.kind;
    if (kind !== 500 && kind !== 503 && kind !== 'hang' && kind !== 'reset')
      bad("kind must be 500, 503, 'hang' or 'reset'");
    const count = b.count ?? 1;
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 1) bad('count must be a positive integer');
    const when = b.when ?? 'before';
    if (when !== 'before' && when !== 'after') bad("when must be 'before' or 'after'");
    const fault: SimFault = {
      path,
      count: count as number,
      kind: kind as SimFault['kind'],
      when: when as 'before' | 'after',
    };
    const method = optString(b, 'method');
    if (method) fault.method = method.toUpperCase();
    const action = optString(b, 'action');
    if (action) fault.action = action;
    state.faults.push(fault);
    return ok(fault, 201);
  });
  r.add('DELETE', '/faults', () => {
    state.faults = [];
    return { status: 204 };
  });

  r.add('GET', '/holds', () => ok({ rules: state.holds.rules, held: state.holds.held() }));
  r.add('POST', '/holds', (req) => {
    const b = body(req);
    const path = optString(b, 'path') ?? bad('path is required (e.g. /compute/v2.1/servers/)');
    const count = b.count ?? 1;
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 1) bad('count must be a positive integer');
    const rule: SimHoldRule = { path, count: count as number };
    const method = optString(b, 'method');
    if (method) rule.method = method.toUpperCase();
    const action = optString(b, 'action');
    if (action) rule.action = action;
    return ok(state.holds.add(rule), 201);
  });
  r.add('POST', '/holds/release', (req) => {
    const id = body(req).id;
    if (id !== undefined && (typeof id !== 'number' || !Number.isInteger(id))) bad('id must be an integer');
    return ok({ released: state.holds.release(id as number | undefined) });
  });
  r.add('DELETE', '/holds', () => {
    state.holds.clear();
    return { status: 204 };
  });

  r.add('GET', '/latencies', () => ok(state.latencies));
  r.add('PUT', '/latencies', (req) => {
    const b = body(req);
    for (const key of ['evacuate', 'stop', 'start', 'api'] as (keyof SimLatencies)[]) {
      const v = b[key];
      if (v === undefined) continue;
      if (typeof v !== 'number' || !(v >= 0)) bad(`${key} must be a non-negative number of milliseconds`);
      state.latencies[key] = v as number;
    }
    return ok(state.latencies);
  });

  r.add('GET', '/counters', () => ok({ actions: state.actionCounts, calls: state.actionCalls }));
  r.add('GET', '/requests', () => ok({ requests: state.requestLog }));
  r.add('DELETE', '/requests', () => {
    state.requestLog = [];
    return { status: 204 };
  });
  r.add('POST', '/tokens/revoke', () => ok({ revoked: state.revokeTokens() }));
  r.add('PUT', '/catalog', (req) => {
    const url = optString(body(req), 'masakari_url') ?? bad('masakari_url is required');
    if (!/^https?:\/\/[^\s]+$/.test(url)) bad('masakari_url must be an http(s) URL');
    state.masakariUrl = url;
    return ok({ masakari_url: url });
  });
  return r;
}
