// Our own minimal Glance and Neutron: only the calls Nova 34 makes with the
// fake virt driver and servers booted with `"networks": "none"`. Everything
// else in the mini cloud is the real service. What Nova calls (read from Nova
// 34.0.0): nova/image/glance.py show() → GET /v2/images/{id} (glanceclient
// also reads GET /v2/schemas/image); nova/network/neutron.py during boot and
// evacuation → GET /v2.0/extensions, GET /v2.0/ports?device_id=…, and
// list/show calls of other collections. Requests are not authenticated.
// Anything unexpected is answered 404 and remembered in `unexpected`, so a
// test can show what Nova asked that we do not serve.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** The image test servers boot from unless they ask for another. */
export const IMAGE_ID = '6f3e5f57-0c4b-4a55-9d0b-7a1f7d1c0001';
/**
 * The same bits with the user property `evacuable=true`, which the operator's
 * `[host_failure] tagged_images` selector reads (Glance v2 shows user
 * properties as top-level strings, glance/api/v2/images.py).
 */
export const EVACUABLE_IMAGE_ID = '6f3e5f57-0c4b-4a55-9d0b-7a1f7d1c0002';

const IMAGES: Record<string, { name: string; properties: Record<string, string> }> = {
  [IMAGE_ID]: { name: 'fake-image', properties: {} },
  [EVACUABLE_IMAGE_ID]: { name: 'fake-image-evacuable', properties: { evacuable: 'true' } },
};

const CREATED = '2026-01-01T00:00:00Z';

function image(id: string): Record<string, unknown> {
  const { name, properties } = IMAGES[id] ?? { name: 'fake-image', properties: {} };
  return glanceImageBody(id, name, properties);
}

/** A Glance v2 image as GET /v2/images/{id} shows it: core fields, user properties beside them (also the simulator's). */
export function glanceImageBody(id: string, name: string, properties: Record<string, string>): Record<string, unknown> {
  return {
    ...properties,
    id,
    name,
    status: 'active',
    visibility: 'public',
    protected: false,
    os_hidden: false,
    disk_format: 'raw',
    container_format: 'bare',
    min_ram: 0,
    min_disk: 0,
    size: 1024,
    virtual_size: 1024,
    checksum: 'd41d8cd98f00b204e9800998ecf8427e',
    os_hash_algo: 'sha512',
    os_hash_value: 'cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce',
    owner: null,
    tags: [],
    created_at: CREATED,
    updated_at: CREATED,
    file: `/v2/images/${id}/file`,
    self: `/v2/images/${id}`,
    schema: '/v2/schemas/image',
  };
}

/** glanceclient builds its model from this; additionalProperties keeps it permissive. */
const IMAGE_SCHEMA = {
  name: 'image',
  additionalProperties: { type: 'string' },
  properties: {
    id: { type: 'string' },
    name: { type: ['null', 'string'] },
    status: { type: 'string' },
    visibility: { type: 'string' },
    protected: { type: 'boolean' },
    os_hidden: { type: 'boolean' },
    disk_format: { type: ['null', 'string'] },
    container_format: { type: ['null', 'string'] },
    min_ram: { type: 'integer' },
    min_disk: { type: 'integer' },
    size: { type: ['null', 'integer'] },
    virtual_size: { type: ['null', 'integer'] },
    checksum: { type: ['null', 'string'] },
    os_hash_algo: { type: ['null', 'string'] },
    os_hash_value: { type: ['null', 'string'] },
    owner: { type: ['null', 'string'] },
    tags: { type: 'array', items: { type: 'string' } },
    created_at: { type: 'string' },
    updated_at: { type: 'string' },
    file: { type: 'string' },
    self: { type: 'string' },
    schema: { type: 'string' },
  },
  links: [],
};

export interface StandIn {
  url: string;
  /** "METHOD path" of requests answered 404 because Nova's fake-driver path should not make them. */
  unexpected: string[];
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function listen(port: number, handle: (req: IncomingMessage, path: string) => [number, unknown]): Promise<Server> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname.replace(/\.json$/, '');
      const [status, body] = handle(req, path);
      send(res, status, body);
    });
  });
  server.keepAliveTimeout = 1_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

const closer = (server: Server) => (): Promise<void> =>
  new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

export async function startGlance(port: number): Promise<StandIn> {
  const unexpected: string[] = [];
  const server = await listen(port, (req, path) => {
    if (req.method === 'GET' && (path === '/' || path === '/versions'))
      return [200, { versions: [{ id: 'v2.16', status: 'CURRENT', links: [{ rel: 'self', href: '/v2/' }] }] }];
    if (req.method === 'GET' && path === '/v2/schemas/image') return [200, IMAGE_SCHEMA];
    const shown = /^\/v2\/images\/([^/]+)$/.exec(path)?.[1];
    if (req.method === 'GET' && shown !== undefined && Object.hasOwn(IMAGES, shown)) return [200, image(shown)];
    if (req.method === 'GET' && path === '/v2/images')
      return [200, { images: Object.keys(IMAGES).map(image), schema: '/v2/schemas/images' }];
    if (req.method === 'GET' && path.startsWith('/v2/images/'))
      return [404, { message: 'No image found', code: '404 Not Found', title: 'Not Found' }];
    unexpected.push(`${req.method} ${path}`);
    return [404, { message: 'not served by the Glance stand-in', code: '404 Not Found', title: 'Not Found' }];
  });
  return { url: `http://127.0.0.1:${port}`, unexpected, close: closer(server) };
}

export async function startNeutron(port: number): Promise<StandIn> {
  const unexpected: string[] = [];
  const server = await listen(port, (req, path) => {
    if (req.method === 'GET' && (path === '/' || path === '/v2.0'))
      return [200, { versions: [{ id: 'v2.0', status: 'CURRENT', links: [] }] }];
    const quota = /^\/v2\.0\/quotas\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && quota) return [200, { quota: { port: -1, network: -1, subnet: -1 } }];
    // GET /v2.0/<collection>: no ports, networks, extensions… (servers boot with networks=none)
    const collection = /^\/v2\.0\/([a-z-]+)$/.exec(path);
    if (req.method === 'GET' && collection) return [200, { [(collection[1] ?? '').replace(/-/g, '_')]: [] }];
    unexpected.push(`${req.method} ${path}`);
    return [404, { NeutronError: { type: 'HTTPNotFound', message: 'not served by the Neutron stand-in', detail: '' } }];
  });
  return { url: `http://127.0.0.1:${port}`, unexpected, close: closer(server) };
}
