// Loaded into the api process with --import by `bench/scale/run.ts
// --trace-intake`: times each POST /v1/notifications inside the server, from
// Node's own diagnostics channels (http.server.request.start, undici:*), and
// appends one JSON line per answer to $INTAKE_TRACE_FILE:
//   { total, firstCall, afterLastCall, calls: [{ call, ms }] }
// in milliseconds from the request's start: the server's whole answer, the
// time before its first Kubernetes API request was sent, the time after its
// last one was answered, and each request from send to response headers.
// The bench sends one POST at a time (2/s, each answered in milliseconds), so
// every Kubernetes API request started while a POST is open is counted as
// that POST's; a background request (a lease renewal) may ride along, and is
// named by its resource. Plain JavaScript: the compiled api (dist/) loads it.
import dc from 'node:diagnostics_channel';
import { appendFileSync } from 'node:fs';

const out = process.env.INTAKE_TRACE_FILE;
const now = () => performance.now();
let open;

if (out) {
  dc.subscribe('http.server.request.start', ({ request, response }) => {
    if (request.method !== 'POST' || !request.url.startsWith('/v1/notifications')) return;
    const post = { t0: now(), calls: [] };
    open = post;
    response.on('finish', () => {
      if (open === post) open = undefined;
      const end = now() - post.t0;
      const done = post.calls.filter((c) => c.sent !== undefined && c.answered !== undefined);
      appendFileSync(
        out,
        JSON.stringify({
          total: end,
          firstCall: done.length ? Math.min(...done.map((c) => c.sent)) : undefined,
          afterLastCall: done.length ? end - Math.max(...done.map((c) => c.answered)) : undefined,
          calls: done.map((c) => ({ call: c.call, ms: c.answered - c.sent })),
        }) + '\n',
      );
    });
  });
  dc.subscribe('undici:request:create', ({ request }) => {
    if (!open) return;
    const resource = request.path.split('?')[0].split('/').filter(Boolean);
    // .../namespaces/<ns>/<plural>[/<name>[/status]]: the plural (with the subresource, if any)
    const at = resource.indexOf('namespaces');
    const plural = at >= 0 ? resource.slice(at + 2) : resource.slice(-1);
    const name = `${request.method} ${plural[0] ?? '?'}${plural[2] ? `/${plural[2]}` : ''}`;
    const call = { call: name };
    open.calls.push(call);
    request.__intakeTrace = { call, post: open };
  });
  dc.subscribe('undici:client:sendHeaders', ({ request }) => {
    const t = request.__intakeTrace;
    if (t) t.call.sent = now() - t.post.t0;
  });
  dc.subscribe('undici:request:headers', ({ request }) => {
    const t = request.__intakeTrace;
    if (t) t.call.answered = now() - t.post.t0;
  });
}
