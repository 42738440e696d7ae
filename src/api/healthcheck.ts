// /healthcheck as oslo.middleware's Healthcheck app answers it (mounted by
// paste's URLMap, so any path under /healthcheck reaches it): HEAD gets a bare
// 204/503, GET and the other methods a body in the format the Accept header
// prefers among text/plain, text/html and application/json (plain text when
// none fits). The one check here is readiness (the store's caches have
// synced); its reason replaces oslo's disable_by_file reason.

import type { Reply } from './replies.ts';
import { bestMatch } from './replies.ts';

const OFFERS = ['text/plain', 'text/html', 'application/json'];

/** oslo's HTML template, rendered for one result without details. */
function htmlPage(reason: string): string {
  return (
    '<HTML>\n<HEAD><TITLE>Healthcheck Status</TITLE></HEAD>\n<BODY>\n\n' +
    '<H2>Result of 1 checks:</H2>\n<TABLE bgcolor="#ffffff" border="1">\n<TBODY>\n<TR>\n\n<TH>\nReason\n</TH>\n</TR>\n<TR>\n\n' +
    `    <TD>${reason}</TD>\n\n</TR>\n</TBODY>\n</TABLE>\n<HR></HR>\n\n</BODY>\n</HTML>`
  );
}

export function healthcheckReply(method: string, accept: string | undefined, ready: boolean): Reply {
  const reason = ready ? 'OK' : 'NOT READY';
  if (method === 'HEAD') return { status: ready ? 204 : 503, headers: {}, body: '' };
  const status = ready ? 200 : 503;
  switch (bestMatch(accept, OFFERS, 'text/plain')) {
    case 'application/json':
      // json.dumps(..., indent=4, sort_keys=True)
      return {
        status,
        headers: { 'content-type': 'application/json' },
        body: `{\n    "detailed": false,\n    "reasons": [\n        "${reason}"\n    ]\n}`,
      };
    case 'text/html':
      return { status, headers: { 'content-type': 'text/html; charset=UTF-8' }, body: htmlPage(reason) };
    default:
      return { status, headers: { 'content-type': 'text/plain; charset=UTF-8' }, body: reason };
  }
}
