// Free loopback ports. The port is released before the caller binds it, so a
// concurrent process can take it first; callers retry the start with new
// ports when a component fails with "address already in use".
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => (port ? resolve(port) : reject(new Error('could not allocate a loopback port'))));
    });
  });
}
