// A small loopback HTTP API over a running mini cloud, so a process that does
// not own it (the test files the runner starts, a second shell next to `make
// openstack`) can kill and restart computes and read the Nova transcript.
//
//   GET  /cloud                     OS_* of admin and member, computes, URLs, work dir
//   POST /computes/{host}/kill      SIGKILL that host's nova-compute
//   POST /computes/{host}/start     start it again; answers once Nova sees it up (with ?wait=false
//                                   at once: a forced-down service never reads up)
//   GET  /computes                  [{host, running}]
//   PUT  /endpoints/instance-ha     {"url": …}: the catalog's masakari endpoint
//   GET  /nova/exchanges?since=N    what went through the nova-api proxy after seq N
//   PUT  /nova/down                 {"down": true|false}: the proxy closes every connection unanswered (an outage)
//   GET  /standins/unexpected       requests the Glance/Neutron stand-ins did not serve
//   POST /reset                     back to the just-started state (reset.ts): computes up and
//                                   enabled, no servers, no aggregates; answers what it undid
//                                   (Nova reachable again; with emulated BMCs: every BMC running, every
//                                   host powered on)
// The emulated BMCs (bmc/emulated-bmcs.ts), started by the first POST /bmcs:
//   POST /bmcs                      start them (once); answers their description (URLs, credentials)
//   GET  /bmcs/events?since=N       the power changes after seq N, with their times
//   POST /bmcs/{redfish|ipmi}[/{host}]/{stop|start}   stop a BMC (unreachable) or start it again
//   POST /bmcs/{redfish|ipmi}/{host}/power/{on|off}   a power request at the BMC, by its own protocol
import { createServer, type Server } from 'node:http';
import { startEmulatedBmcs, type EmulatedBmcs } from './bmc/emulated-bmcs.ts';
import type { OpenStackCloud } from './cloud.ts';
import { defaultLog } from './install.ts';
import { resetCloud } from './reset.ts';

/** What GET /cloud tells another process about the running cloud. */
export type CloudDescription = Pick<
  OpenStackCloud,
  'adminEnv' | 'memberEnv' | 'computes' | 'authUrl' | 'novaUrl' | 'dir' | 'timings'
>;

export function describeCloud(cloud: OpenStackCloud): CloudDescription {
  const { adminEnv, memberEnv, computes, authUrl, novaUrl, dir, timings } = cloud;
  return { adminEnv, memberEnv, computes, authUrl, novaUrl, dir, timings };
}

export interface CloudControl {
  url: string;
  close(): Promise<void>;
}

export async function startCloudControl(
  cloud: OpenStackCloud,
  port = 0,
  log: (line: string) => void = defaultLog,
): Promise<CloudControl> {
  let bmcs: Promise<EmulatedBmcs> | undefined;
  const startBmcs = (): Promise<EmulatedBmcs> => {
    // a failed start is not kept: the next POST /bmcs tries again
    bmcs ??= startEmulatedBmcs(cloud, log).catch((e: unknown) => {
      bmcs = undefined;
      throw e;
    });
    return bmcs;
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const reply = (status: number, body: unknown) => {
        const text = JSON.stringify(body);
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      };
      const url = new URL(req.url ?? '/', 'http://x');
      const compute = /^\/computes\/([^/]+)\/(kill|start)$/.exec(url.pathname);
      const bmcLife = /^\/bmcs\/(redfish|ipmi)(?:\/([^/]+))?\/(stop|start)$/.exec(url.pathname);
      const bmcPower = /^\/bmcs\/(redfish|ipmi)\/([^/]+)\/power\/(on|off)$/.exec(url.pathname);
      const handle = async (): Promise<[number, unknown]> => {
        if (req.method === 'GET' && url.pathname === '/cloud') return [200, describeCloud(cloud)];
        if (req.method === 'GET' && url.pathname === '/computes')
          return [200, cloud.computes.map((host) => ({ host, running: cloud.computeRunning(host) }))];
        if (req.method === 'POST' && compute) {
          const host = decodeURIComponent(compute[1] ?? '');
          if (!cloud.computes.includes(host)) return [404, { error: `no compute ${host}` }];
          if (compute[2] === 'kill') await cloud.killCompute(host);
          else await cloud.startCompute(host, url.searchParams.get('wait') !== 'false');
          return [200, { host, running: cloud.computeRunning(host) }];
        }
        if (req.method === 'PUT' && url.pathname === '/endpoints/instance-ha') {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { url?: string };
          if (!body.url) return [400, { error: 'url required' }];
          await cloud.setMasakariEndpoint(body.url);
          return [200, { url: body.url }];
        }
        if (req.method === 'PUT' && url.pathname === '/nova/down') {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { down?: unknown };
          if (typeof body.down !== 'boolean') return [400, { error: 'down (boolean) required' }];
          cloud.recorder.setDown(body.down);
          return [200, { down: body.down }];
        }
        if (req.method === 'GET' && url.pathname === '/nova/exchanges') {
          const since = Number(url.searchParams.get('since') ?? 0) || 0;
          return [200, { last: cloud.recorder.lastSeq(), exchanges: cloud.recorder.since(since) }];
        }
        if (req.method === 'POST' && url.pathname === '/reset') {
          cloud.recorder.setDown(false);
          // the BMCs first: powering a host on starts its nova-compute, which resetCloud would otherwise start
          const bmcsReset = bmcs ? await (await bmcs).reset() : [];
          const report = await resetCloud(cloud, cloud.keystone.nova);
          // a host the BMCs powered on runs nova-compute, maybe forced down until resetCloud cleared that
          if (bmcsReset.length) await cloud.waitComputesUp(cloud.computes);
          return [200, { ...report, bmcsReset }];
        }
        if (req.method === 'POST' && url.pathname === '/bmcs') return [200, (await startBmcs()).describe()];
        if (req.method === 'GET' && url.pathname === '/bmcs/events') {
          if (!bmcs) return [409, { error: 'no emulated BMCs: POST /bmcs first' }];
          return [200, (await bmcs).events(Number(url.searchParams.get('since') ?? 0) || 0)];
        }
        if (req.method === 'POST' && (bmcLife || bmcPower)) {
          if (!bmcs) return [409, { error: 'no emulated BMCs: POST /bmcs first' }];
          const b = await bmcs;
          const host = decodeURIComponent((bmcLife ? bmcLife[2] : bmcPower?.[2]) ?? '');
          if (host && !cloud.computes.includes(host)) return [404, { error: `no compute ${host}` }];
          if (bmcLife) {
            const kind = bmcLife[1] as 'redfish' | 'ipmi';
            await (bmcLife[3] === 'stop' ? b.stop(kind, host || undefined) : b.start(kind, host || undefined));
          } else if (bmcPower) {
            await b.power(bmcPower[1] as 'redfish' | 'ipmi', host, bmcPower[3] as 'on' | 'off');
          }
          return [200, b.describe()];
        }
        if (req.method === 'GET' && url.pathname === '/standins/unexpected')
          return [200, { glance: cloud.glance.unexpected, neutron: cloud.neutron.unexpected }];
        return [404, { error: `no route ${req.method} ${url.pathname}` }];
      };
      handle().then(
        ([status, body]) => reply(status, body),
        (e: unknown) => reply(500, { error: e instanceof Error ? e.message : String(e) }),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const addr = server.address();
  const actual = typeof addr === 'object' && addr ? addr.port : port;
  return {
    url: `http://127.0.0.1:${actual}`,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await (await bmcs?.catch(() => undefined))?.close();
    },
  };
}
