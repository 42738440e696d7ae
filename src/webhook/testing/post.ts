// FOR UNIT TESTS ONLY: one HTTPS request to the webhook server (POST /validate
// with a JSON body unless told otherwise), answered with its status and body.
import https from 'node:https';
import type { OutgoingHttpHeaders } from 'node:http';
import type { WebhookServer } from '../server.ts';

export interface PostOptions {
  path?: string;
  method?: string;
  /** The content-type; application/json unless given. */
  type?: string;
  headers?: OutgoingHttpHeaders;
  /** false (the default): a fresh TLS handshake per request, so a rotated certificate is seen. */
  agent?: https.Agent | false;
}

export function post(
  server: WebhookServer,
  ca: string,
  body: string,
  o: PostOptions = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: server.address().port,
        path: o.path ?? '/validate',
        method: o.method ?? 'POST',
        ca,
        agent: o.agent ?? false,
        headers: { 'content-type': o.type ?? 'application/json', ...o.headers },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
