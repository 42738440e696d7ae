// The GitOps tools' own health logic, run on objects read back from the API
// server: Argo CD's per-kind Lua health checks (config/argocd/argocd-cm-health.yaml)
// with Lua 5.1, the language of the gopher-lua interpreter Argo CD embeds,
// and kstatus (Flux's health checks, cli-utils) through hack/kstatus, a
// wrapper around sigs.k8s.io/cli-utils/pkg/kstatus/status built from Go modules.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { ROOT, run } from '../packaging/tools.ts';

export const ARGOCD_HEALTH = join(ROOT, 'config', 'argocd', 'argocd-cm-health.yaml');
const HEALTH_PREFIX = 'resource.customizations.health.';
const GROUP = 'masakari.openkeel.io';

/** The data keys of the documented argocd-cm snippet. */
export function argocdHealthKeys(): Record<string, string> {
  const cm = load(readFileSync(ARGOCD_HEALTH, 'utf8')) as { data?: Record<string, string> };
  return cm.data ?? {};
}

/**
 * The health check Argo CD would pick for a kind: the exact
 * <group>_<kind> key, else a wildcard key whose pattern matches (Argo CD
 * accepts `*` in group and kind).
 */
export function argocdScriptFor(kind: string): string | undefined {
  const keys = argocdHealthKeys();
  const exact = keys[`${HEALTH_PREFIX}${GROUP}_${kind}`];
  if (exact !== undefined) return exact;
  for (const [key, script] of Object.entries(keys)) {
    if (!key.startsWith(HEALTH_PREFIX) || !key.includes('*')) continue;
    const pattern = key
      .slice(HEALTH_PREFIX.length)
      .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*');
    if (new RegExp(`^${pattern}$`).test(`${GROUP}_${kind}`)) return script;
  }
  return undefined;
}

/** A JSON value as a Lua 5.1 table constructor (what Argo CD hands the script as `obj`). */
export function toLua(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'boolean' || typeof value === 'number') return String(value);
  if (typeof value === 'string') {
    // decimal byte escapes: Lua 5.1 has no \u, and this keeps every byte exact
    const bytes = [...Buffer.from(value, 'utf8')];
    return `"${bytes.map((b) => (b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\${b}`)).join('')}"`;
  }
  if (Array.isArray(value)) return `{${value.map(toLua).join(', ')}}`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== null && v !== undefined);
  return `{${entries.map(([k, v]) => `[${toLua(k)}] = ${toLua(v)}`).join(', ')}}`;
}

export interface Health {
  status: string;
  message: string;
}

const LUA = process.env.LUA ?? 'lua5.1';

/** Runs Argo CD's health check for obj's kind; undefined when Argo CD would have none. */
export async function argocdHealth(obj: { kind: string }): Promise<Health | undefined> {
  const script = argocdScriptFor(obj.kind);
  if (script === undefined) return undefined;
  // Argo CD runs the script as a chunk with the global `obj`; a function body is the same chunk.
  const program = [
    `obj = ${toLua(obj)}`,
    'local function health()',
    script,
    'end',
    'local hs = health()',
    'io.write(tostring(hs.status), "\\t", tostring(hs.message or ""))',
  ].join('\n');
  const r = await run(LUA, ['-'], 10_000, program);
  if (r.code !== 0) {
    throw new Error(
      `${LUA} failed (exit ${r.code}): ${r.stderr}` +
        (r.stderr.includes('ENOENT') ? ' (install lua5.1: apt-get install lua5.1; .ci/run does)' : ''),
    );
  }
  const [status = '', ...message] = r.stdout.split('\t');
  return { status, message: message.join('\t') };
}

let kstatusPath: Promise<string> | undefined;

/** Path of the kstatus wrapper, built by hack/kstatus/build.sh when missing. */
export function kstatusBinary(): Promise<string> {
  kstatusPath ??= run(join(ROOT, 'hack', 'kstatus', 'build.sh'), [], 15 * 60_000).then((r) => {
    const path = r.stdout.trim().split('\n').pop() ?? '';
    if (r.code !== 0 || !path) throw new Error(`hack/kstatus/build.sh failed (exit ${r.code}):\n${r.stderr}`);
    return path;
  });
  return kstatusPath;
}

/** kstatus's status (Current, InProgress, Failed, ...) and message for one object. */
export async function kstatus(obj: object): Promise<Health> {
  const r = await run(await kstatusBinary(), [], 30_000, JSON.stringify(obj));
  if (r.code !== 0) throw new Error(`kstatus failed (exit ${r.code}): ${r.stderr}`);
  const line = JSON.parse(r.stdout.trim().split('\n')[0] ?? '{}') as Health;
  return { status: line.status, message: line.message };
}
