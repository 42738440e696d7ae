// `make release` (hack/release/release.sh) into a scratch directory: the SBOM
// lists exactly the npm packages the image holds, SHA256SUMS covers and
// verifies every artifact, the packaged chart pins the image in the archive
// by its manifest digest, and the changelog section names the commits.
// The image build reuses the layers of any earlier build (hack/image/build.sh);
// release.test.ts beside it installs the same artifacts on the real node. It sits in the cluster suite, with
// the other tests that build the image (buildah or podman, as root), not in the integration suite.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { load } from 'js-yaml';
import { find, helm, MINIMAL_VALUES, parseManifests, ROOT, run } from '../integration/packaging/tools.ts';
import { container } from '../integration/packaging/workloads.ts';

/** The image build with every layer cached, writing the archive and extracting /app: minutes on a loaded machine. */
const RELEASE_TIMEOUT_MS = 30 * 60_000;
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const NAME = 'masakari-operator';

interface LockPackage {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
}
interface CdxComponent {
  type: string;
  group?: string;
  name: string;
  version: string;
  purl?: string;
}
interface CdxBom {
  bomFormat: string;
  specVersion: string;
  metadata: { component: { name: string; version: string } };
  components: CdxComponent[];
}

const ctx: { out?: string; files?: string[] } = {};
const exec = promisify(execFile);
const test = suite('make release');

test.before(async () => {
  ctx.out = mkdtempSync(join(tmpdir(), 'masakari-release-'));
  const r = await run(join(ROOT, 'hack', 'release', 'release.sh'), [ctx.out], RELEASE_TIMEOUT_MS);
  if (r.code !== 0) throw new Error(`hack/release/release.sh failed (exit ${r.code}):\n${r.stderr.slice(-4000)}`);
  assert.is(r.stdout.trim().split('\n').pop(), ctx.out, 'release.sh prints its output directory');
  ctx.files = readdirSync(ctx.out).sort();
});

test.after(() => {
  if (ctx.out) rmSync(ctx.out, { recursive: true, force: true });
});

const out = (file: string): string => join(ctx.out!, file);

test('one directory holds the image archive, the chart, the SBOM, the digest, the changelog section and SHA256SUMS', () => {
  assert.equal(ctx.files, [
    `CHANGELOG-${VERSION}.md`,
    'SHA256SUMS',
    `${NAME}-${VERSION}.cdx.json`,
    `${NAME}-${VERSION}.digest`,
    `${NAME}-${VERSION}.oci.tar`,
    `${NAME}-${VERSION}.tgz`,
  ]);
});

test('the SBOM lists every npm package the image installs (npm ci --omit=dev --omit=optional), and nothing else', () => {
  const bom = JSON.parse(readFileSync(out(`${NAME}-${VERSION}.cdx.json`), 'utf8')) as CdxBom;
  assert.is(bom.bomFormat, 'CycloneDX');
  assert.equal(bom.metadata.component, { ...bom.metadata.component, name: NAME, version: VERSION });
  const listed = bom.components.map((c) => `${c.group ? `${c.group}/` : ''}${c.name}@${c.version}`).sort();
  // What the Dockerfile's deps stage installs: every package of the lock that is neither dev nor optional.
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockPackage>;
  };
  const installed = Object.entries(lock.packages)
    .filter(([path, p]) => path !== '' && !p.dev && !p.optional && !p.devOptional)
    .map(([path, p]) => `${path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)}@${p.version}`)
    .sort();
  assert.ok(installed.length > 50, `package-lock.json lists ${installed.length} production packages`);
  assert.equal(listed, installed);
  for (const direct of ['express', 'js-yaml', 'undici', 'pino'])
    assert.ok(
      bom.components.some((c) => c.name === direct && c.purl?.startsWith(`pkg:npm/${direct}@`)),
      `${direct} listed with its purl`,
    );
});

test('SHA256SUMS covers every other artifact, and every sum verifies', async () => {
  const lines = readFileSync(out('SHA256SUMS'), 'utf8').trim().split('\n');
  const sums = new Map(
    lines.map((line) => {
      const m = /^([0-9a-f]{64}) {2}(\S+)$/.exec(line);
      if (!m) throw new Error(`not a sha256sum line: ${line}`);
      return [m[2]!, m[1]!];
    }),
  );
  assert.equal(
    [...sums.keys()].sort(),
    ctx.files!.filter((f) => f !== 'SHA256SUMS'),
  );
  for (const [file, sum] of sums)
    assert.is(
      createHash('sha256')
        .update(readFileSync(out(file)))
        .digest('hex'),
      sum,
      file,
    );
  // as a user checks them: in the directory, with the file's own names
  const check = await exec('sha256sum', ['--strict', '-c', 'SHA256SUMS'], { cwd: ctx.out!, timeout: 60_000 });
  assert.match(check.stdout, new RegExp(`^${NAME}-${VERSION}\\.oci\\.tar: OK$`, 'm'));
});

test("the packaged chart pins the image to the archive's manifest digest; the source chart stays unpinned", async () => {
  const index = await run('tar', ['-xOf', out(`${NAME}-${VERSION}.oci.tar`), 'index.json'], 60_000);
  assert.is(index.code, 0, index.stderr);
  const manifests = (
    JSON.parse(index.stdout) as { manifests: { digest: string; annotations?: Record<string, string> }[] }
  ).manifests;
  assert.is(manifests.length, 1);
  const digest = manifests[0]!.digest;
  assert.match(digest, /^sha256:[0-9a-f]{64}$/);
  // containerd's own name annotation: `ctr images import` names the image as the chart asks for it
  assert.is(manifests[0]!.annotations?.['io.containerd.image.name'], `docker.io/library/${NAME}:${VERSION}`);
  assert.is(readFileSync(out(`${NAME}-${VERSION}.digest`), 'utf8').trim(), digest);
  const values = await run('tar', ['-xOzf', out(`${NAME}-${VERSION}.tgz`), `${NAME}/values.yaml`], 60_000);
  assert.is(values.code, 0, values.stderr);
  assert.is((load(values.stdout) as { image: { digest: string } }).image.digest, digest);
  const source = load(readFileSync(join(ROOT, 'charts', NAME, 'values.yaml'), 'utf8')) as { image: { digest: string } };
  assert.is(source.image.digest, '', 'the source chart is not pinned');

  // Credentials as the packaging tests give them (MINIMAL_VALUES): without any the chart refuses to render.
  const rendered = await helm([
    'template',
    'mko',
    out(`${NAME}-${VERSION}.tgz`),
    '--namespace',
    'masakari',
    '--set',
    `openstack.envSecret=${MINIMAL_VALUES.openstack.envSecret}`,
  ]);
  assert.is(rendered.code, 0, rendered.stderr);
  const manifestsRendered = parseManifests(rendered.stdout);
  for (const component of ['api', 'engine']) {
    const deployment = find(manifestsRendered, 'Deployment', `mko-${NAME}-${component}`);
    assert.is(container(deployment).image, `${NAME}@${digest}`, component);
  }
});

test('the changelog section is headed by the version and lists the commits since the root commit (no tag yet)', async () => {
  const text = readFileSync(out(`CHANGELOG-${VERSION}.md`), 'utf8');
  assert.match(text, new RegExp(`^## ${VERSION.replace(/\./g, '\\.')} \\(\\d{4}-\\d{2}-\\d{2}\\)\n`));
  const tags = await run('git', ['tag', '--merged', 'HEAD'], 30_000);
  const root = await run('git', ['rev-list', '--max-parents=0', '--abbrev-commit', 'HEAD'], 30_000);
  if (tags.stdout.trim() === '')
    assert.ok(text.includes(`since the first commit, ${root.stdout.trim().split('\n').pop()}`));
  const head = await run('git', ['log', '-1', '--format=- %s (%h)'], 30_000);
  assert.ok(text.includes(head.stdout.trim()), `the newest commit is listed:\n${head.stdout}`);
  const digest = readFileSync(out(`${NAME}-${VERSION}.digest`), 'utf8').trim();
  assert.ok(text.includes(digest), 'the section names the image digest');
});

test.run();
