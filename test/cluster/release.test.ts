// The release artifacts on a real node, as docs/install.md ("From the release
// artifacts") has users install them: `make release` (hack/release/release.sh)
// into a scratch directory, `sha256sum -c SHA256SUMS`, the OCI archive
// imported into the node's containerd, the packaged chart (image pinned by
// digest) installed, and the post-install smoke test of docs/install.md ("What
// is tested, and a smoke test after installing"), plus: every pod runs exactly
// the image of the archive. The tests run in order and share one release.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../tools/controlplane/ports.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/server.ts';
import {
  ROOT,
  clusterEnv,
  createSimulatorCredentials,
  helm,
  kubectl,
  kubectlJson,
  kubectlRaw,
  openstack,
  orderedSteps,
  restrictedNamespace,
  serviceUrl,
  waitPodsReady,
} from './support/tools.ts';

const exec = promisify(execFile);
const NS = 'masakari-release';
const RELEASE = 'masakari-operator';
const NAME = 'masakari-operator';
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const PODS = `app.kubernetes.io/instance=${RELEASE}`;
/** The image build finds every layer cached (the runner built the same Dockerfile); writing the archive dominates. */
const RELEASE_TIMEOUT_MS = 20 * 60_000;

interface Ctx {
  out?: string;
  digest?: string;
  chart?: string;
  sim?: Simulator;
}
const ctx: Ctx = {};
const test = suite('release artifacts on a real node');

/** Every step needs the one before it: after a failure the rest fail at once, naming it. */
const step = orderedSteps(test, { bail: true });

/**
 * `ctr` against the node's containerd, in the namespace the kubelet uses. The runner's cluster
 * (tools/controlplane/cluster.ts) keeps the admin kubeconfig and `run/containerd.sock` in its run directory.
 */
async function ctr(args: string[], timeoutMs = 300_000): Promise<string> {
  const sock = join(dirname(clusterEnv().kubeconfig), 'run', 'containerd.sock');
  if (!existsSync(sock)) throw new Error(`no containerd socket at ${sock} (tools/controlplane/cluster.ts moved it?)`);
  const r = await exec('ctr', ['--address', sock, '--namespace', 'k8s.io', ...args], {
    timeout: timeoutMs,
    maxBuffer: 16 << 20,
  });
  return r.stdout;
}

function osEnv(): Record<string, string> {
  return { ...(ctx.sim?.credentials ?? {}), OS_INTERFACE: 'public' };
}

step('make release writes the artifacts, and sha256sum -c SHA256SUMS verifies them', async () => {
  ctx.out = mkdtempSync(join(tmpdir(), 'masakari-release-'));
  const r = await exec(join(ROOT, 'hack', 'release', 'release.sh'), [ctx.out], {
    cwd: ROOT,
    timeout: RELEASE_TIMEOUT_MS,
    maxBuffer: 64 << 20,
  });
  assert.is(r.stdout.trim().split('\n').pop(), ctx.out);
  const check = await exec('sha256sum', ['--strict', '-c', 'SHA256SUMS'], { cwd: ctx.out });
  assert.match(check.stdout, new RegExp(`${NAME}-${VERSION}\\.oci\\.tar: OK`));
  ctx.digest = readFileSync(join(ctx.out, `${NAME}-${VERSION}.digest`), 'utf8').trim();
  assert.match(ctx.digest, /^sha256:[0-9a-f]{64}$/);
  ctx.chart = join(ctx.out, `${NAME}-${VERSION}.tgz`);
  assert.ok(existsSync(ctx.chart), ctx.chart);
});

step("ctr images import loads the OCI archive into the node's containerd under the pinned digest", async () => {
  // as docs/install.md has it: --digests also names the image by its digest, the name the kubelet asks for
  await ctr([
    'images',
    'import',
    '--base-name',
    `docker.io/library/${NAME}`,
    '--digests',
    join(ctx.out!, `${NAME}-${VERSION}.oci.tar`),
  ]);
  const images = await ctr(['images', 'ls']);
  for (const ref of [`docker.io/library/${NAME}:${VERSION}`, `docker.io/library/${NAME}@${ctx.digest}`]) {
    const line = images.split('\n').find((l) => l.startsWith(`${ref} `));
    assert.ok(line, `${ref} among:\n${images}`);
    assert.ok(line.includes(` ${ctx.digest} `), `${ref} has the digest ${ctx.digest}:\n${line}`);
  }
});

step(
  'helm install of the packaged chart: every pod Ready under the restricted PSS, each running the archived image',
  async () => {
    const { nodeIp } = clusterEnv();
    const simPort = await freePort();
    await restrictedNamespace(NS);
    await createSimulatorCredentials('cloud', NS, `http://${nodeIp}:${simPort}/identity/v3`);
    // The chart's defaults (Keystone auth, the webhook on) but for the credentials and one replica each
    // (2 cores); no NodeHealthCheck on this cluster, so no Role in its lease namespace.
    await helm([
      'install',
      RELEASE,
      ctx.chart!,
      '--namespace',
      NS,
      '--set',
      'openstack.envSecret=cloud',
      '--set',
      'api.replicas=1',
      '--set',
      'engine.replicas=1',
      '--set',
      'remediation.readMedik8sLeases=false',
      '--wait',
      '--timeout',
      '5m',
    ]);
    ctx.sim = await startSimulator({
      host: nodeIp,
      port: simPort,
      hosts: ['compute-a'],
      servers: [],
      masakariUrl: `${await serviceUrl(NS, 'masakari-api')}/v1`,
    });
    await waitPodsReady(NS, PODS, 2);
    const pods = await kubectlJson<{
      items: {
        metadata: { name: string };
        spec: { containers: { image: string }[] };
        status: { containerStatuses?: { image: string; imageID: string }[] };
      }[];
    }>(['get', 'pods', '-n', NS, '-l', PODS]);
    for (const pod of pods.items) {
      assert.equal(
        pod.spec.containers.map((c) => c.image),
        [`${NAME}@${ctx.digest}`],
        pod.metadata.name,
      );
      // what the kubelet started: containerd's repo digest of the image it ran
      for (const s of pod.status.containerStatuses ?? [])
        assert.ok(s.imageID.endsWith(`${NAME}@${ctx.digest}`), `${pod.metadata.name} runs ${s.imageID}`);
    }
  },
);

step('the smoke test of docs/install.md: rollout, pods, engine leader, API through its Service', async () => {
  await kubectl(
    ['-n', NS, 'rollout', 'status', `deploy/${RELEASE}-api`, `deploy/${RELEASE}-engine`, '--timeout=240s'],
    { timeoutMs: 260_000 },
  );
  const pods = await kubectlJson<{ items: { status: { phase: string; containerStatuses?: { ready: boolean }[] } }[] }>([
    '-n',
    NS,
    'get',
    'pods',
  ]);
  for (const p of pods.items) {
    assert.is(p.status.phase, 'Running');
    assert.ok(p.status.containerStatuses?.every((c) => c.ready));
  }
  const holder = await kubectl(['-n', NS, 'get', 'lease', 'masakari-engine', '-o', 'jsonpath={.spec.holderIdentity}']);
  assert.match(holder, new RegExp(`^${RELEASE}-engine-`), 'one engine pod leads');
  const versions = JSON.parse(
    await kubectl(['get', '--raw', `/api/v1/namespaces/${NS}/services/masakari-api:http/proxy/`]),
  ) as { versions: { id: string; status: string }[] };
  assert.ok(
    versions.versions.some((v) => v.id === 'v1.0' && v.status === 'CURRENT'),
    JSON.stringify(versions),
  );
});

step(
  'the engine pod carries ipmitool, which the IPMI fencing driver runs (HaHost spec.fencing driver ipmi)',
  async () => {
    const out = await kubectl(['-n', NS, 'exec', `deploy/${RELEASE}-engine`, '--', 'ipmitool', '-V']);
    assert.match(out, /^ipmitool version \d/);
  },
);

step('the smoke test of docs/install.md: openstack segment list with Keystone credentials', async () => {
  const list = (await openstack(osEnv(), ['segment', 'list'])) as unknown[];
  assert.equal(list, []);
});

step('the smoke test of docs/install.md: the webhook answers a server-side dry run', async () => {
  const r = await kubectlRaw([
    '-n',
    NS,
    'apply',
    '--dry-run=server',
    '-f',
    join(ROOT, 'config', 'samples', 'masakari_v1alpha1_failoversegment.yaml'),
  ]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /failoversegment\.masakari\.openkeel\.io\/segment1 created \(server dry run\)/);
});

test.after(async () => {
  await ctx.sim?.stop();
  await helm(['uninstall', RELEASE, '--namespace', NS, '--wait', '--timeout', '3m']).catch(() => undefined);
  await kubectlRaw(['delete', 'namespace', NS, '--wait=false']);
  if (ctx.out) rmSync(ctx.out, { recursive: true, force: true });
});

test.run();
