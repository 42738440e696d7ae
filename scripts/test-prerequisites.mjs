// What a test run needs from the machine, and which suites the runner
// (scripts/run-tests.mjs) leaves out when it is not there. Pure functions of
// what was probed, so scripts/test-prerequisites.test.ts can pin them.
//
//   cluster    always needs root: it runs kubelet and containerd and writes iptables rules
//              (tools/controlplane/cluster.ts).
//   openstack  needs root only to install Debian's rabbitmq-server (hack/openstack/rabbitmq.sh)
//              and, for its emulated BMCs, openipmi and ipmitool (hack/bmc/openipmi.sh) when they
//              are missing; with them installed, it runs as any user.
//   lua5.1     not a suite: the gitops health tests of the integration suite run Argo CD's Lua
//              health checks with it (test/integration/gitops/health-tools.ts). Installed with apt
//              when missing and root, as .ci/run does; otherwise named in the summary, and those
//              tests fail naming the package.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export const RABBITMQ_SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server';

/** Whether an executable named `name` is on PATH. */
export function onPath(name, path = process.env.PATH ?? '') {
  return path
    .split(delimiter)
    .filter(Boolean)
    .some((dir) => executable(join(dir, name)));
}

export function executable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** What the machine offers, probed once. */
export function probeMachine() {
  return {
    root: process.getuid?.() === 0,
    // the openstack suite's Debian packages: rabbitmq-server, and openipmi + ipmitool for its emulated BMCs
    rabbitmq: executable(RABBITMQ_SERVER) && onPath('epmd') && onPath('ipmi_sim') && onPath('ipmitool'),
    lua: onPath(process.env.LUA ?? 'lua5.1'),
    apt: onPath('apt-get'),
  };
}

/**
 * The suites of `mode` left out, each with why: those that need root when the runner is not
 * root, or when skipRoot (`make test SKIP_ROOT=1`) says to leave them out anyway. A suite named
 * on its own (`run-tests.mjs cluster`) is never left out: asked for, it runs and fails if it must.
 * @param {{ mode: string, root: boolean, skipRoot: boolean, rabbitmq: boolean }} m
 * @returns {{ suite: string, reason: string }[]}
 */
export function suitesLeftOut({ mode, root, skipRoot, rabbitmq }) {
  if (mode !== 'all' || (root && !skipRoot)) return [];
  const why = skipRoot ? 'SKIP_ROOT=1' : 'not root';
  const out = [{ suite: 'cluster', reason: `needs root (kubelet, containerd, iptables); left out: ${why}` }];
  if (!rabbitmq) {
    out.push({
      suite: 'openstack',
      reason: `needs root to install Debian's rabbitmq-server, openipmi and ipmitool (apt-get install rabbitmq-server openipmi ipmitool once as root, then it runs as any user); left out: ${why}`,
    });
  }
  return out;
}

/**
 * What to do about lua5.1 before a run that includes the integration suite: nothing, install it
 * (root with apt-get, as .ci/run does), or name it in the summary as missing.
 * @param {{ lua: boolean, root: boolean, apt: boolean }} m
 * @returns {'ok' | 'install' | 'missing'}
 */
export function luaAction({ lua, root, apt }) {
  if (lua) return 'ok';
  return root && apt ? 'install' : 'missing';
}

/** The summary line for lua5.1 when it is missing. */
export const LUA_MISSING =
  'lua5.1 is not installed: the gitops health tests (integration) fail naming it; install it with apt-get install lua5.1 (as root)';
