// Migrated, empty SQLite databases of Keystone, Placement and Nova, built once
// per venv and copied into each cloud's work dir. The schema migrations are
// deterministic for a given venv but cost a minute or more of CPU on two busy
// cores (keystone-manage db_sync, placement-manage db sync, nova-manage
// api_db sync and db sync each import their whole service). What a single run
// needs on top (Keystone's admin user and catalog, Nova's cell mappings, the
// fernet keys) is written per run.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ADMIN_PASSWORD } from './config.ts';

export const TEMPLATE_FILES = ['keystone.sqlite', 'placement.sqlite', 'nova_api.sqlite', 'nova_cell.sqlite'] as const;

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** The template dir of this venv: beside it, named after the venv's requirements stamp (or its path). */
export function templateDir(venv: string): string {
  const stampFile = join(venv, '.masakari-requirements.sha256');
  const key = existsSync(stampFile) ? readFileSync(stampFile, 'utf8').trim() : venv;
  return join(dirname(venv), `db-templates-${createHash('sha256').update(key).digest('hex').slice(0, 16)}`);
}

/**
 * Runs statements against a SQLite file with the venv's Python (sqlite3 only:
 * starts in milliseconds); prints the last statement's rows as JSON.
 */
export function sqlite(venv: string, file: string, statements: string[], params: unknown[][] = []): Promise<string> {
  const script = [
    'import json, sqlite3, sys',
    'db = sqlite3.connect(sys.argv[1], timeout=30)',
    'stmts = json.loads(sys.argv[2]); params = json.loads(sys.argv[3])',
    'rows = []',
    'for i, s in enumerate(stmts): rows = db.execute(s, params[i] if i < len(params) else []).fetchall()',
    'db.commit()',
    'print(json.dumps(rows))',
  ].join('\n');
  return run(
    join(venv, 'bin/python'),
    ['-c', script, file, JSON.stringify(statements), JSON.stringify(params)],
    {},
    60_000,
  );
}

export async function ensureTemplates(venv: string, log: (line: string) => void, timeoutMs: number): Promise<string> {
  const final = templateDir(venv);
  if (TEMPLATE_FILES.every((f) => existsSync(join(final, f)))) return final;
  const t = Date.now();
  log(`building the migrated database templates in ${final} (once per venv)`);
  const work = `${final}.${process.pid}-${randomBytes(3).toString('hex')}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const conn = (f: string) => `sqlite:///${join(work, f)}`;
  writeFileSync(
    join(work, 'keystone.conf'),
    `[database]\nconnection = ${conn('keystone.sqlite')}\n[identity]\npassword_hash_rounds = 4\n` +
      `[fernet_tokens]\nkey_repository = ${join(work, 'fernet')}\n[fernet_receipts]\nkey_repository = ${join(work, 'fernet')}\n` +
      `[credential]\nkey_repository = ${join(work, 'credential')}\n`,
  );
  // bootstrap insists on a key repository (it does not use the keys); they are thrown away with the conf
  writeFernetKeys(join(work, 'fernet'));
  writeFernetKeys(join(work, 'credential'));
  writeFileSync(join(work, 'placement.conf'), `[placement_database]\nconnection = ${conn('placement.sqlite')}\n`);
  writeFileSync(
    join(work, 'nova.conf'),
    `[api_database]\nconnection = ${conn('nova_api.sqlite')}\n[database]\nconnection = ${conn('nova_cell.sqlite')}\n`,
  );
  const env: NodeJS.ProcessEnv = {
    PATH: `${join(venv, 'bin')}:${process.env.PATH ?? ''}`,
    HOME: work,
    LANG: 'C.UTF-8',
  };
  const bin = (n: string) => join(venv, 'bin', n);
  const step = async (what: string, cmd: string, args: string[]) => {
    const s = Date.now();
    await run(cmd, args, env, timeoutMs);
    log(`template: ${what} ${((Date.now() - s) / 1000).toFixed(1)} s`);
  };
  try {
    await Promise.all([
      (async () => {
        const k = ['--config-file', join(work, 'keystone.conf')];
        await step('keystone-manage db_sync', bin('keystone-manage'), [...k, 'db_sync']);
        // placeholder URLs: each run points the identity endpoints at its own port (keystone-seed.ts)
        await step('keystone-manage bootstrap', bin('keystone-manage'), [
          ...k,
          'bootstrap',
          '--bootstrap-password',
          ADMIN_PASSWORD,
          '--bootstrap-public-url',
          'http://127.0.0.1:1/v3/',
          '--bootstrap-internal-url',
          'http://127.0.0.1:1/v3/',
          '--bootstrap-admin-url',
          'http://127.0.0.1:1/v3/',
          '--bootstrap-region-id',
          'RegionOne',
        ]);
      })(),
      step('placement-manage db sync', bin('placement-manage'), [
        '--config-file',
        join(work, 'placement.conf'),
        'db',
        'sync',
      ]),
      (async () => {
        const n = ['--config-file', join(work, 'nova.conf')];
        await step('nova-manage api_db sync', bin('nova-manage'), [...n, 'api_db', 'sync']);
        // --local_cell: only [database], the cell schema that cell0 and cell1 share
        await step('nova-manage db sync', bin('nova-manage'), [...n, 'db', 'sync', '--local_cell']);
      })(),
    ]);
    // WAL is a property of the file: every copy inherits it (several processes share each DB)
    await Promise.all(TEMPLATE_FILES.map((f) => sqlite(venv, join(work, f), ['PRAGMA journal_mode=WAL'])));
    for (const f of ['keystone.conf', 'placement.conf', 'nova.conf', 'fernet', 'credential']) {
      rmSync(join(work, f), { recursive: true, force: true });
    }
    rmSync(final, { recursive: true, force: true });
    renameSync(work, final);
  } catch (e) {
    rmSync(work, { recursive: true, force: true });
    throw e;
  }
  log(`database templates built in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  return final;
}

/** A fernet key repository as `keystone-manage fernet_setup` leaves it: staged key 0 and primary key 1. */
export function writeFernetKeys(repo: string): void {
  mkdirSync(repo, { recursive: true, mode: 0o700 });
  chmodSync(repo, 0o700);
  for (const name of ['0', '1']) {
    writeFileSync(join(repo, name), randomBytes(32).toString('base64url') + '=', { mode: 0o600 });
  }
}
