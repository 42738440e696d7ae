// A tiny HTTP client for tests of the API component listening on loopback.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response documents are checked field by field
export type Doc = any;

/** Sends a JSON request to the component's address; resolves with the status and the parsed body. */
export function callApi(
  api: { address(): AddressInfo },
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Doc }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: api.address().port,
        method,
        path,
        headers: payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {},
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
