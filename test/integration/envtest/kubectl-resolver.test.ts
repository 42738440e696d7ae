// hack/envtest/kubectl.sh, the resolver every kubectl the tests (and .ci/run)
// run goes through: KUBECTL, else `kubectl` on PATH, else a kubectl built once
// from the pinned k8s.io/kubernetes module into the envtest cache. Hermetic: a
// fake `go` stands in for the real (minutes-long) build, and PATH holds only
// the few commands the script needs, so the machine's own kubectl stays out.
import { spawnSync } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const ENVTEST = fileURLToPath(new URL('../../../hack/envtest/', import.meta.url));
const SCRIPT = join(ENVTEST, 'kubectl.sh');
const GO_MOD = join(ENVTEST, 'kube-apiserver', 'go.mod');
/** What the script and the fake go below run (flock only when the system has it, as the script does). */
const TOOLS = ['bash', 'dirname', 'mkdir', 'mktemp', 'cp', 'mv', 'rm', 'chmod'];
const OPTIONAL_TOOLS = ['flock'];

interface Sandbox {
  root: string;
  /** PATH: the tools, the fake go, and (with `onPath`) a fake kubectl. */
  bin: string;
  assets: string;
  goLog: string;
}

function which(cmd: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    try {
      accessSync(join(dir, cmd), constants.X_OK);
      return join(dir, cmd);
    } catch {
      // not in this dir
    }
  }
  return undefined;
}

function writeExecutable(path: string, text: string): string {
  writeFileSync(path, text);
  chmodSync(path, 0o755);
  return path;
}

// Logs its arguments; `go build ... -o OUT PKG` leaves a script at OUT.
const FAKE_GO = `#!/bin/sh
echo "$*" >> "$FAKE_GO_LOG"
if [ "$1" = build ]; then
  prev=
  for a in "$@"; do [ "$prev" = -o ] && out=$a; prev=$a; done
  printf '#!/bin/sh\\necho built kubectl\\n' > "$out"
  chmod +x "$out"
fi
`;

function sandbox(): Sandbox {
  const root = mkdtempSync(join(tmpdir(), 'kubectl-resolver-'));
  const bin = join(root, 'bin');
  mkdirSync(bin);
  for (const tool of [...TOOLS, ...OPTIONAL_TOOLS]) {
    const path = which(tool);
    if (path) symlinkSync(path, join(bin, tool));
    else if (TOOLS.includes(tool)) throw new Error(`${tool} is not on PATH`);
  }
  writeExecutable(join(bin, 'go'), FAKE_GO);
  return { root, bin, assets: join(root, 'assets'), goLog: join(root, 'go.log') };
}

function resolve(box: Sandbox, env: Record<string, string> = {}) {
  const r = spawnSync(which('bash') ?? '/bin/bash', [SCRIPT], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { PATH: box.bin, HOME: box.root, MASAKARI_ASSETS: box.assets, FAKE_GO_LOG: box.goLog, ...env },
  });
  return { code: r.status, path: r.stdout.trim(), stderr: r.stderr };
}

const goCalls = (box: Sandbox): string[] => {
  try {
    return readFileSync(box.goLog, 'utf8').trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
};

/** The k8s.io/kubernetes version the wrapper module pins, e.g. "1.34.4". */
function pinnedKubernetes(): string {
  const m = /^require k8s\.io\/kubernetes v(\S+)$/m.exec(readFileSync(GO_MOD, 'utf8'));
  if (!m?.[1]) throw new Error(`no k8s.io/kubernetes require in ${GO_MOD}`);
  return m[1];
}

const resolver = suite<{ box: Sandbox }>('kubectl resolver', { box: undefined as unknown as Sandbox });
resolver.before.each((ctx) => {
  ctx.box = sandbox();
});
resolver.after.each((ctx) => {
  rmSync(ctx.box.root, { recursive: true, force: true });
});

resolver('KUBECTL wins over a kubectl on PATH, and nothing is built', ({ box }) => {
  writeExecutable(join(box.bin, 'kubectl'), '#!/bin/sh\n');
  const chosen = writeExecutable(join(box.root, 'my-kubectl'), '#!/bin/sh\n');
  const r = resolve(box, { KUBECTL: chosen });
  assert.is(r.code, 0, r.stderr);
  assert.is(r.path, chosen);
  assert.match(r.stderr, '(KUBECTL)');
  assert.equal(goCalls(box), []);
});

resolver('KUBECTL naming no executable fails with the reason instead of falling back', ({ box }) => {
  writeExecutable(join(box.bin, 'kubectl'), '#!/bin/sh\n');
  const r = resolve(box, { KUBECTL: join(box.root, 'missing') });
  assert.is(r.code, 1);
  assert.is(r.path, '');
  assert.match(r.stderr, `KUBECTL=${join(box.root, 'missing')} is not an executable`);
});

resolver('a kubectl on PATH is used as is: machines that have one never pay for the build', ({ box }) => {
  const onPath = writeExecutable(join(box.bin, 'kubectl'), '#!/bin/sh\n');
  const r = resolve(box);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.path, onPath);
  assert.match(r.stderr, '(PATH)');
  assert.equal(goCalls(box), []);
});

resolver('without one, k8s.io/kubernetes/cmd/kubectl is built into the envtest cache once', ({ box }) => {
  const version = pinnedKubernetes();
  const first = resolve(box);
  assert.is(first.code, 0, first.stderr);
  assert.ok(first.path.startsWith(`${box.assets}/k8s-${version}-etcd-`), first.path);
  assert.ok(first.path.endsWith('/kubectl'), first.path);
  assert.is(spawnSync(first.path, { encoding: 'utf8' }).stdout, 'built kubectl\n');
  const calls = goCalls(box);
  const build = calls.find((c) => c.startsWith('build '));
  assert.ok(build, calls.join('\n'));
  assert.ok(build.endsWith(' k8s.io/kubernetes/cmd/kubectl'), build);
  // the same version kube-apiserver reports, as `kubectl version` shows it
  assert.ok(build.includes(`k8s.io/component-base/version.gitVersion=v${version}`), build);

  const again = resolve(box);
  assert.is(again.code, 0, again.stderr);
  assert.is(again.path, first.path);
  assert.equal(goCalls(box), calls, 'the second resolve found the cached build');
});

resolver('KUBECTL_FORCE_BUILD=1 builds (or reuses) the cached one even when kubectl is on PATH', ({ box }) => {
  writeExecutable(join(box.bin, 'kubectl'), '#!/bin/sh\n');
  const r = resolve(box, { KUBECTL_FORCE_BUILD: '1', KUBECTL: join(box.bin, 'kubectl') });
  assert.is(r.code, 0, r.stderr);
  assert.ok(r.path.startsWith(`${box.assets}/`), r.path);
  assert.ok(goCalls(box).some((c) => c.startsWith('build ')));
});

resolver('the wrapper module declares kubectl as a tool, so go mod tidy keeps its dependencies', () => {
  assert.match(readFileSync(GO_MOD, 'utf8'), /^tool k8s\.io\/kubernetes\/cmd\/kubectl$/m);
});

resolver.run();
