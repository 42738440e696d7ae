// Installs what the mini OpenStack needs and exits, without starting it: the
// pinned venv (hack/openstack/venv.sh), Debian's rabbitmq-server, the
// migrated database templates, and for the emulated BMCs sushy-tools' venv
// (hack/bmc/sushy-venv.sh) and Debian's openipmi and ipmitool. `.ci/run` starts this in the background at the
// very beginning, so the minutes of pip and schema migrations overlap with
// lint and the other suites; the openstack suite's own bring-up then finds
// everything cached (venv.sh holds a lock, so a build still running is waited
// for, never started twice).
//
//   node --import tsx tools/openstack-cloud/prepare.ts
import { defaultLog, ensureOpenIpmi, ensureOpenStackVenv, ensureRabbitmq, ensureSushyVenv } from './install.ts';
import { ensureTemplates } from './templates.ts';

/** Venv, RabbitMQ and database templates; returns the seconds each took. */
export async function prepareOpenStack(log: (line: string) => void = defaultLog): Promise<Record<string, number>> {
  const t0 = Date.now();
  const secs = (since: number) => Math.round((Date.now() - since) / 100) / 10;
  const timings: Record<string, number> = {};
  const [venv] = await Promise.all([
    ensureOpenStackVenv(log).then((v) => {
      timings.venv = secs(t0);
      return v;
    }),
    // the apt installs one after the other (dpkg's lock), while pip builds the venvs
    ensureRabbitmq().then(async () => {
      timings.rabbitmq = secs(t0);
      await ensureOpenIpmi();
      timings.openipmi = secs(t0);
    }),
    ensureSushyVenv().then(() => {
      timings.sushy = secs(t0);
    }),
  ]);
  const t1 = Date.now();
  await ensureTemplates(venv, log, 30 * 60_000);
  timings.templates = secs(t1);
  timings.total = secs(t0);
  return timings;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  prepareOpenStack().then(
    (timings) => {
      defaultLog(`prepared in ${timings.total} s (${JSON.stringify(timings)})`);
    },
    (e: unknown) => {
      defaultLog(`prepare failed: ${e instanceof Error ? e.message : String(e)}`);
      process.exit(1);
    },
  );
}
