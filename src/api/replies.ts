// The three kinds of response bodies Masakari's stack produces:
//  - its own JSON (views) and JSON faults ({"<faultName>": {"code", "message"}},
//    masakari/api/openstack/wsgi.py Fault);
//  - webob's generic error pages (router 404, sizelimit 413), whose format
//    follows the Accept header;
//  - keystonemiddleware's 401.

import { faultNameFor } from '../domain/errors.ts';
import { pyJsonDumps } from '../domain/pyjson.ts';

export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** One of webob's generic error pages, which answer a HEAD request differently. */
  webobError?: true;
}

export const JSON_TYPE = 'application/json';
export const FAULT_CONTENT_TYPE = 'application/json; charset=UTF-8';

/** A JSON document with Masakari's serialisation. */
export function jsonReply(status: number, doc: unknown, contentType = JSON_TYPE): Reply {
  return { status, headers: { 'content-type': contentType }, body: doc === null ? '' : pyJsonDumps(doc) };
}

/** A Masakari fault body. */
export function faultReply(status: number, message: string): Reply {
  const name = faultNameFor(status);
  return {
    status,
    headers: { 'content-type': FAULT_CONTENT_TYPE },
    body: pyJsonDumps({ [name]: { code: status, message } }),
  };
}

const STATUS_TITLES: Record<number, string> = {
  300: 'Multiple Choices',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Request Entity Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

function parseAccept(header: string): MediaRange[] {
  return header
    .split(',')
    .map((part) => {
      const [range = '', ...params] = part.trim().split(';');
      const [type = '', subtype = ''] = range.trim().toLowerCase().split('/');
      let q = 1;
      for (const p of params) {
        const [k, v] = p.trim().split('=');
        if (k?.trim() === 'q' && v !== undefined) q = Number(v);
      }
      return { type, subtype, q: Number.isFinite(q) ? q : 0 };
    })
    .filter((r) => r.type !== '');
}

/** The quality the Accept header gives an offer (exact beats type/*, which beats *\/*). */
function quality(ranges: MediaRange[], offer: string): number {
  const [type, subtype] = offer.split('/');
  let best = -1;
  let bestSpecificity = -1;
  for (const r of ranges) {
    const specificity =
      r.type === type && r.subtype === subtype ? 2 : r.type === type && r.subtype === '*' ? 1 : r.type === '*' ? 0 : -1;
    if (specificity > bestSpecificity) {
      bestSpecificity = specificity;
      best = r.q;
    }
  }
  return best;
}

/** webob Accept.best_match: the highest-quality offer, earlier offers winning ties; the default when none fits. */
export function bestMatch(
  accept: string | undefined,
  offers: string[],
  fallback: string | undefined,
): string | undefined {
  if (!accept) return fallback;
  const ranges = parseAccept(accept);
  let chosen: string | undefined;
  let chosenQ = 0;
  for (const offer of offers) {
    const q = quality(ranges, offer);
    if (q > chosenQ) {
      chosen = offer;
      chosenQ = q;
    }
  }
  return chosen ?? fallback;
}

/** webob's generic HTTP error page (explanation, then an optional detail), in the format the Accept header asks for. */
export function webobErrorReply(status: number, explanation: string, accept: string | undefined, detail = ''): Reply {
  const line = `${status} ${STATUS_TITLES[status] ?? 'Error'}`;
  const format = bestMatch(accept, ['text/html', 'application/json', 'text/plain'], 'text/plain');
  if (format === 'application/json') {
    const body = pyJsonDumps({
      message: `${explanation}<br /><br />\n${detail}\n\n`,
      code: line,
      title: STATUS_TITLES[status] ?? 'Error',
    });
    return { status, headers: { 'content-type': 'application/json' }, body, webobError: true };
  }
  if (format === 'text/html') {
    const body =
      `<html>\n <head>\n  <title>${line}</title>\n </head>\n <body>\n  <h1>${line}</h1>\n` +
      `  ${explanation}<br /><br />\n${detail}\n\n\n </body>\n</html>`;
    return { status, headers: { 'content-type': 'text/html; charset=UTF-8' }, body, webobError: true };
  }
  return {
    status,
    headers: { 'content-type': 'text/plain; charset=UTF-8' },
    body: `${line}\n\n${explanation}\n\n ${detail}  `,
    webobError: true,
  };
}

/** keystonemiddleware auth_token's rejection of a missing or invalid token. */
export function unauthorizedReply(message: string, wwwAuthenticateUri: string): Reply {
  return {
    status: 401,
    headers: { 'content-type': 'application/json', 'www-authenticate': `Keystone uri="${wwwAuthenticateUri}"` },
    body: pyJsonDumps({ error: { code: 401, title: 'Unauthorized', message } }),
  };
}

/** webob's 503 explanation (keystonemiddleware adds its own detail when Keystone cannot answer). */
export const SERVICE_UNAVAILABLE_EXPLANATION = 'The server is currently unavailable. Please try again at a later time.';
