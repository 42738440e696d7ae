// The /v1 URL map, as the Routes library builds it for Masakari
// (masakari/api/openstack/__init__.py ProjectMapper + each extension's
// get_resources). Every resource gets Routes' full set — index, create, new,
// show, update, delete, edit, plus the member 'action' where declared — both
// plain and under a /{project_id} prefix, each with an optional .json/.xml
// suffix. A path/method pair outside this set is the router's plain 404; an
// action in the set that the controller lacks (src/api/controllers/) is a
// 405 badMethod.

export type Action = 'index' | 'create' | 'new' | 'show' | 'update' | 'delete' | 'edit' | 'action';

export interface ResourceDef {
  /** Collection segment of the URL. */
  collection: string;
  /** The extension alias (policy names use it: os_masakari_api:<alias>:<action>). */
  alias: string;
  parent?: { collection: string; param: 'segment_id' | 'notification_id' };
  /** POST /{id}/action is declared (segments, notifications). */
  memberAction: boolean;
}

export const ROUTE_RESOURCES = {
  extensions: {
    collection: 'extensions',
    alias: 'extensions',
    memberAction: false,
  },
  hosts: {
    collection: 'hosts',
    alias: 'os-hosts',
    parent: { collection: 'segments', param: 'segment_id' },
    memberAction: false,
  },
  notifications: {
    collection: 'notifications',
    alias: 'notifications',
    memberAction: true,
  },
  segments: {
    collection: 'segments',
    alias: 'segments',
    memberAction: true,
  },
  versions: {
    collection: 'versions',
    alias: 'versions',
    memberAction: false,
  },
  vmoves: {
    collection: 'vmoves',
    alias: 'vmoves',
    parent: { collection: 'notifications', param: 'notification_id' },
    memberAction: false,
  },
} as const satisfies Record<string, ResourceDef>;

export type ResourceName = keyof typeof ROUTE_RESOURCES;

export interface RouteMatch {
  resource: ResourceName;
  action: Action;
  id?: string;
  parentId?: string;
  projectId?: string;
  format?: 'json' | 'xml';
  /** Route template for metrics, e.g. /v1/segments/{id}. */
  template: string;
}

/** Routes' default requirement for :(id): no slash, not ending with a backslash. */
const ID = /^[^/]+$/;
const PROJECT_ID = /^[0-9a-f-]+$/;

function splitFormat(segment: string): { base: string; format?: 'json' | 'xml' } {
  const m = /^(.+)\.(json|xml)$/.exec(segment);
  return m ? { base: m[1]!, format: m[2] as 'json' | 'xml' } : { base: segment };
}

function validId(id: string): boolean {
  return ID.test(id) && !id.endsWith('\\');
}

/** Matches the segments after the optional project prefix against one resource. */
function matchResource(
  name: ResourceName,
  def: ResourceDef,
  method: string,
  parts: string[],
): Omit<RouteMatch, 'template' | 'projectId'> | undefined {
  let rest = parts;
  let parentId: string | undefined;
  if (def.parent) {
    if (rest.length < 3 || rest[0] !== def.parent.collection || !validId(rest[1]!)) return undefined;
    parentId = rest[1];
    rest = rest.slice(2);
  }
  if (rest.length === 0) return undefined;
  const head = splitFormat(rest[0]!);
  const withParent = parentId === undefined ? {} : { parentId };
  if (rest.length === 1) {
    const collection =
      rest[0] === def.collection ? { format: undefined } : head.base === def.collection ? head : undefined;
    if (!collection) return undefined;
    const fmt = collection.format ? { format: collection.format } : {};
    if (method === 'POST') return { resource: name, action: 'create', ...withParent, ...fmt };
    if (method === 'GET') return { resource: name, action: 'index', ...withParent, ...fmt };
    return undefined;
  }
  if (rest[0] !== def.collection) return undefined;
  if (rest.length === 2) {
    const member = rest[1]!;
    if (method === 'GET') {
      const n = splitFormat(member);
      if (member === 'new' || (n.base === 'new' && n.format)) {
        return { resource: name, action: 'new', ...withParent, ...(n.format ? { format: n.format } : {}) };
      }
    }
    const action = method === 'PUT' ? 'update' : method === 'DELETE' ? 'delete' : method === 'GET' ? 'show' : undefined;
    if (!action) return undefined;
    const f = splitFormat(member);
    if (f.format && validId(f.base)) return { resource: name, action, id: f.base, format: f.format, ...withParent };
    if (validId(member)) return { resource: name, action, id: member, ...withParent };
    return undefined;
  }
  if (rest.length === 3 && validId(rest[1]!)) {
    const tail = splitFormat(rest[2]!);
    const word = rest[2] === 'action' || rest[2] === 'edit' ? rest[2] : tail.format ? tail.base : undefined;
    const fmt = rest[2] === word ? {} : { format: tail.format };
    if (word === 'action' && def.memberAction && method === 'POST') {
      return { resource: name, action: 'action', id: rest[1], ...withParent, ...fmt };
    }
    if (word === 'edit' && method === 'GET')
      return { resource: name, action: 'edit', id: rest[1], ...withParent, ...fmt };
  }
  return undefined;
}

function template(def: ResourceDef, m: Omit<RouteMatch, 'template'>): string {
  const prefix = m.projectId !== undefined ? '/v1/{project_id}' : '/v1';
  const parent = def.parent ? `/${def.parent.collection}/{${def.parent.param}}` : '';
  const base = `${prefix}${parent}/${def.collection}`;
  switch (m.action) {
    case 'index':
    case 'create':
      return base;
    case 'new':
      return `${base}/new`;
    case 'edit':
      return `${base}/{id}/edit`;
    case 'action':
      return `${base}/{id}/action`;
    default:
      return `${base}/{id}`;
  }
}

/**
 * Matches a decoded path below /v1 ('' or '/…'). Undefined means the router
 * has no route (a plain 404). The version document routes ('' and '/') are
 * the versions resource's show.
 */
export function matchV1(method: string, path: string): RouteMatch | undefined {
  if (path === '' || path === '/') {
    return method === 'GET' ? { resource: 'versions', action: 'show', template: '/v1' } : undefined;
  }
  if (!path.startsWith('/')) return undefined;
  const parts = path.slice(1).split('/');
  const candidates: { parts: string[]; projectId?: string }[] = [{ parts }];
  if (parts.length > 1 && PROJECT_ID.test(parts[0]!))
    candidates.unshift({ parts: parts.slice(1), projectId: parts[0] });
  for (const c of candidates) {
    for (const [name, def] of Object.entries(ROUTE_RESOURCES) as [ResourceName, ResourceDef][]) {
      const m = matchResource(name, def, method, c.parts);
      if (m) {
        const full = { ...m, ...(c.projectId !== undefined ? { projectId: c.projectId } : {}) };
        if (full.format === undefined) delete full.format;
        return { ...full, template: template(def, full) };
      }
    }
  }
  return undefined;
}
