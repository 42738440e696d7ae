// The three sides of the comparison, each a Masakari v1 endpoint wired to the
// same mini cloud: keystone auth against its Keystone, Nova through its
// catalog, and for Masakari RPC over its RabbitMQ.
//   masakari-defaults  masakari-api + masakari-engine 22.0.0, every option at Masakari's default
//   masakari-wait0     the same with wait_period_after_service_update = 0
//   ours               the operator (compiled dist/, api + engine) on a local control plane, our defaults
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { startReferenceMasakari } from '../../test/e2e/support/reference-masakari.ts';
import { startOperator } from '../../test/e2e/support/stack.ts';
import { useNamespace } from '../../test/support/cluster.ts';
import { ADMIN_PASSWORD } from '../../tools/openstack-cloud/config.ts';
import type { OpenStackCloud } from '../../tools/openstack-cloud/cloud.ts';

const run = promisify(execFile);

export const SIDES = ['masakari-wait0', 'ours', 'masakari-defaults'] as const;
export type SideName = (typeof SIDES)[number];

export interface RunningSide {
  name: SideName;
  /** The endpoint without /v1. */
  url: string;
  /** The last lines of its output, for a failure message. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Masakari's own default for notification_delay_max: without a coordination
 * backend masakari-api sleeps a random 0..5 s before creating a notification.
 */
const MASAKARI_NOTIFICATION_DELAY_MAX = 5;
/** oslo.messaging's default rpc_response_timeout. */
const OSLO_RPC_RESPONSE_TIMEOUT = 60;

/** masakari.conf `masakari_topic` (default): the RPC server's queue. */
const MASAKARI_ENGINE_TOPIC = 'ha_engine';
const ENGINE_READY_TIMEOUT_MS = 180_000;

/** Consumers of a RabbitMQ queue (0 when it does not exist yet), asked with the venv's kombu. */
async function consumers(venv: string, transportUrl: string, queue: string): Promise<number> {
  const script = [
    'import sys, kombu',
    "with kombu.Connection(sys.argv[1].replace('rabbit://', 'amqp://', 1), connect_timeout=5) as c:",
    '    try:',
    '        print(c.channel().queue_declare(queue=sys.argv[2], passive=True).consumer_count)',
    '    except Exception:',
    '        print(0)',
  ].join('\n');
  const r = await run(path.join(venv, 'bin/python'), ['-c', script, transportUrl, queue], { timeout: 30_000 }).catch(
    () => ({ stdout: '0' }),
  );
  return Number(r.stdout.trim()) || 0;
}

export async function startSide(name: SideName, cloud: OpenStackCloud, venv: string): Promise<RunningSide> {
  if (name === 'ours') {
    const ns = await useNamespace('bench-openstack');
    const op = await startOperator({
      kubeconfigPath: ns.kubeconfigPath,
      namespace: ns.namespace,
      components: 'api,engine',
      auth: 'keystone',
      openstack: cloud.adminEnv,
      compiled: true,
    });
    return {
      name,
      url: op.apiUrl,
      output: () => op.output().slice(-8_000),
      stop: async () => {
        await op.stop();
        await ns.cleanup();
      },
    };
  }
  const ref = await startReferenceMasakari({
    venv,
    authUrl: cloud.authUrl,
    username: 'admin',
    password: ADMIN_PASSWORD,
    projectName: 'admin',
    rpcResponseTimeout: OSLO_RPC_RESPONSE_TIMEOUT,
    transportUrl: cloud.transportUrl,
    keystoneAuth: true,
    notificationDelayMax: MASAKARI_NOTIFICATION_DELAY_MAX,
    // under load 30 on 2 cores masakari-api once took over 60 s to answer its first request
    apiStartTimeoutMs: 300_000,
    engine: {
      masakariDefaults: true,
      options: name === 'masakari-wait0' ? { wait_period_after_service_update: 0 } : {},
    },
  });
  // A cast to a topic nobody consumes yet is dropped: wait until masakari-engine consumes its queue.
  const deadline = Date.now() + ENGINE_READY_TIMEOUT_MS;
  while ((await consumers(venv, cloud.transportUrl, MASAKARI_ENGINE_TOPIC)) < 1) {
    if (Date.now() > deadline) {
      await ref.stop();
      throw new Error(`masakari-engine consumes no RabbitMQ queue after 180 s:\n${ref.engineLog().slice(-4_000)}`);
    }
    await new Promise((r) => setTimeout(r, 2_000));
  }
  return { name, url: ref.url, output: () => ref.engineLog().slice(-8_000), stop: () => ref.stop() };
}
