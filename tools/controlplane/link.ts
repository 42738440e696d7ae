// A network link between one kube-apiserver and one etcd member of the HA
// control plane (controlplane.ts, shape 'ha'), as a TCP relay in the owner's
// process that can be degraded on demand: delayed (every chunk held for a
// while, in order, both ways) or partitioned (nothing passes either way and
// new connections are accepted but not answered, as when packets are
// dropped). Healing lets everything held through, as TCP's retransmissions
// would after a short partition. The kernel's tc netem would do the same on
// a real network, but this machine's kernel has no netem or prio qdisc, and
// a qdisc on loopback would slow every other process's traffic too.
import { connect, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';

export type LinkState = { mode: 'open' } | { mode: 'delayed'; ms: number } | { mode: 'partitioned' };

export interface Link {
  port: number;
  set(state: LinkState): void;
  state(): LinkState;
  close(): Promise<void>;
}

/** One direction of a relayed connection: chunks wait in order until the link lets them through. */
class Direction {
  private queue: { chunk: Buffer; due: number }[] = [];
  private timer: NodeJS.Timeout | undefined;
  constructor(
    private readonly to: Socket,
    private readonly link: () => LinkState,
  ) {}

  push(chunk: Buffer): void {
    const s = this.link();
    this.queue.push({ chunk, due: Date.now() + (s.mode === 'delayed' ? s.ms : 0) });
    this.flush();
  }

  flush(): void {
    if (this.timer) return;
    if (this.link().mode === 'partitioned' || this.to.destroyed) return;
    while (this.queue.length) {
      const head = this.queue[0]!;
      const wait = head.due - Date.now();
      if (wait > 0) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.flush();
        }, wait).unref();
        return;
      }
      this.queue.shift();
      this.to.write(head.chunk);
    }
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.queue = [];
  }
}

/** Listens on 127.0.0.1:port and relays every connection to 127.0.0.1:target through the link's state. */
export async function startLink(port: number, target: number): Promise<Link> {
  let current: LinkState = { mode: 'open' };
  const state = (): LinkState => current;
  const flows = new Set<{ directions: Direction[]; sockets: Socket[]; start?: () => void }>();

  const onConnection = (client: Socket): void => {
    client.on('error', () => undefined);
    client.unref();
    const flow: { directions: Direction[]; sockets: Socket[]; start?: () => void } = {
      directions: [],
      sockets: [client],
    };
    flows.add(flow);
    client.pause();
    const close = (): void => {
      flows.delete(flow);
      for (const d of flow.directions) d.stop();
      for (const s of flow.sockets) s.destroy();
    };
    client.on('close', close);
    // a partitioned link answers no new connection either: the client's connect hangs until it heals
    flow.start = () => {
      flow.start = undefined;
      const upstream = connect({ host: '127.0.0.1', port: target });
      upstream.unref();
      flow.sockets.push(upstream);
      upstream.on('error', close);
      upstream.on('close', close);
      const up = new Direction(upstream, state);
      const down = new Direction(client, state);
      flow.directions.push(up, down);
      client.on('data', (c: Buffer) => up.push(c));
      upstream.on('data', (c: Buffer) => down.push(c));
      client.resume();
    };
    if (current.mode !== 'partitioned') flow.start();
  };

  const server: Server = createServer({ allowHalfOpen: false }, onConnection);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  server.unref();

  return {
    port,
    state,
    set(next) {
      current = next;
      if (next.mode === 'partitioned') return;
      for (const f of [...flows]) {
        f.start?.();
        for (const d of f.directions) d.flush();
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const f of [...flows]) for (const s of f.sockets) s.destroy();
        flows.clear();
        server.close(() => resolve());
      }),
  };
}
