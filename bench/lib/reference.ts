// The reference masakari-api 22.0.0 (test/e2e/support/reference-masakari.ts)
// prepared for scale and storm runs: one segment and host created through
// its REST API, and notifications inserted straight into its SQLite
// database, as bench/scale writes ours straight to the API server.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

async function rest(base: string, method: string, p: string, body?: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(`${base}/v1${p}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? null : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`reference ${method} ${p}: ${r.status} ${text}`);
  return (text ? JSON.parse(text) : {}) as Record<string, unknown>;
}

/** A segment with one host `hostname` (Nova must know it); returns both uuids. */
export async function referenceHost(url: string, hostname: string): Promise<{ segmentUuid: string; hostUuid: string }> {
  const seg = (await rest(url, 'POST', '/segments', {
    segment: { name: `bench-${hostname}`, recovery_method: 'auto', service_type: 'COMPUTE' },
  })) as { segment: { uuid: string } };
  const host = (await rest(url, 'POST', `/segments/${seg.segment.uuid}/hosts`, {
    host: { name: hostname, type: 'COMPUTE', control_attributes: 'SSH' },
  })) as { host: { uuid: string } };
  return { segmentUuid: seg.segment.uuid, hostUuid: host.host.uuid };
}

/** The SQLite file named by `[database] connection = sqlite:///…` in a masakari.conf. */
export async function sqlitePathOf(configFile: string): Promise<string> {
  const conf = await readFile(configFile, 'utf8');
  const m = /^\[database\][^[]*?^connection\s*=\s*sqlite:\/\/\/(.+)$/m.exec(conf);
  if (!m?.[1]) throw new Error(`${configFile}: no sqlite [database] connection`);
  return m[1].trim().replace(/\?.*$/, ''); // without the URL's options (?timeout=…)
}

// Rows as masakari's notification_create writes them (masakari/db/sqlalchemy/
// api.py, models.Notification), all `finished`, created one second apart up
// to now, in one transaction. The columns are read from the table, so a
// column this does not know fails loudly instead of being left NULL.
const INSERT_SCRIPT = String.raw`
import sqlite3, sys, uuid, json, datetime
db, count, seg, host = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
con = sqlite3.connect(db)
cols = [r[1] for r in con.execute("PRAGMA table_info(notifications)")]
now = datetime.datetime.utcnow().replace(microsecond=0)
payload = json.dumps({"event": "STARTED", "host_status": "NORMAL", "cluster_status": "ONLINE"})
def row(i):
    t = (now - datetime.timedelta(seconds=count - i)).strftime("%Y-%m-%d %H:%M:%S.000000")
    v = {"created_at": t, "updated_at": t, "deleted_at": None, "deleted": 0,
         "notification_uuid": str(uuid.uuid4()), "generated_time": t, "type": "COMPUTE_HOST",
         "payload": payload, "status": "finished", "source_host_uuid": host,
         "failover_segment_uuid": seg, "message": None}
    missing = [c for c in cols if c != "id" and c not in v]
    if missing:
        sys.exit("unknown notifications columns: %s" % missing)
    return [v[c] for c in cols if c != "id"]
names = [c for c in cols if c != "id"]
sql = "INSERT INTO notifications (%s) VALUES (%s)" % (",".join(names), ",".join("?" * len(names)))
with con:
    con.executemany(sql, (row(i) for i in range(count)))
print(con.execute("SELECT COUNT(*) FROM notifications").fetchone()[0])
`;

/** Inserts `count` finished notifications of one host; returns how many the table holds. */
export async function insertReferenceNotifications(o: {
  venv: string;
  configFile: string;
  count: number;
  segmentUuid: string;
  hostUuid: string;
}): Promise<number> {
  const db = await sqlitePathOf(o.configFile);
  const r = await run(
    path.join(o.venv, 'bin/python'),
    ['-c', INSERT_SCRIPT, db, String(o.count), o.segmentUuid, o.hostUuid],
    { timeout: 600_000 },
  );
  return Number(r.stdout.trim());
}
