// Glance v2, the one call the engine makes (src/openstack/nova.ts getImage):
// GET /v2/images/{id}, which Glance answers with the core fields and every user
// property as a top-level string (glance/api/v2/images.py ImagesController.show).
// Authenticated like Nova: a live token or 401. Faults and their bodies are
// Glance's flat {"message", "code", "title"}.

import type { SimRequest, SimResponse } from './router.ts';
import { glanceImageBody } from '../openstack-cloud/standins.ts';
import type { SimState } from './state.ts';

const TITLES: Record<number, string> = { 401: 'Unauthorized', 404: 'Not Found', 500: 'Internal Server Error' };

export function glanceFault(status: number, message: string): SimResponse {
  const title = TITLES[status] ?? 'Error';
  return { status, body: { message, code: `${status} ${title}`, title } };
}

export function glanceHandler(state: SimState): (req: SimRequest) => SimResponse {
  return (req) => {
    if (req.method === 'GET' && (req.path === '/' || req.path === '/versions')) {
      return { status: 200, body: { versions: [{ id: 'v2.16', status: 'CURRENT', links: [] }] } };
    }
    const token = req.headers['x-auth-token'];
    if (!state.liveToken(typeof token === 'string' ? token : undefined)) {
      return glanceFault(401, 'The request you have made requires authentication.');
    }
    const m = /^\/v2\/images\/([^/]+)$/.exec(req.path);
    if (req.method !== 'GET' || !m) return glanceFault(404, 'The resource could not be found.');
    const image = state.images.get(decodeURIComponent(m[1] ?? ''));
    if (!image) return glanceFault(404, `No image found with ID ${m[1]}`);
    return { status: 200, body: glanceImageBody(image.id, image.name, image.properties) };
  };
}
