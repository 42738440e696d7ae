// The mini OpenStack's work dir: per-run ports, the services' configuration
// files, one state dir per fake compute, and the SQLite databases copied from
// the venv's migrated templates plus the cell mappings
// `nova-manage cell_v2 map_cell0` and `create_cell --name cell1` would insert.

import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../controlplane/ports.ts';
import { computeConf, keystoneConf, novaConf, placementConf, rabbitUrl, type CloudPorts } from './config.ts';
import { ensureTemplates, sqlite, writeFernetKeys } from './templates.ts';

/** Creates the work dir under the system tmpdir, with everything the services read before they start. */
export async function prepareWorkDir(
  venv: string,
  computes: string[],
  log: (line: string) => void,
  startTimeoutMs: number,
): Promise<{ dir: string; ports: CloudPorts }> {
  const dir = mkdtempSync(join(tmpdir(), 'masakari-os-'));
  for (const d of ['etc/keystone', 'etc/placement', 'etc/nova', 'db', 'log', 'lock', 'run', 'state/control']) {
    mkdirSync(join(dir, d), { recursive: true });
  }
  for (const d of ['mnesia', 'log', 'home']) mkdirSync(join(dir, 'rabbit', d), { recursive: true });

  const ports: CloudPorts = {
    rabbit: await freePort(),
    rabbitDist: await freePort(),
    epmd: await freePort(),
    keystone: await freePort(),
    placement: await freePort(),
    novaApi: await freePort(),
    nova: await freePort(),
    glance: await freePort(),
    neutron: await freePort(),
  };

  writeFileSync(join(dir, 'etc/keystone/keystone.conf'), keystoneConf(dir));
  writeFileSync(join(dir, 'etc/placement/placement.conf'), placementConf(dir, ports));
  writeFileSync(join(dir, 'etc/nova/nova.conf'), novaConf(dir, ports));
  copyFileSync(join(venv, 'etc/nova/api-paste.ini'), join(dir, 'etc/nova/api-paste.ini'));
  for (const host of computes) {
    mkdirSync(join(dir, 'state', host), { recursive: true });
    // devstack pre-writes the node identity of each fake compute (lib/nova);
    // FakeDriverWithoutFakeNodes reads it at every start, so a restart keeps its node
    writeFileSync(join(dir, 'state', host, 'compute_id'), `${randomUUID()}\n`);
    writeFileSync(join(dir, 'etc', `compute-${host}.conf`), computeConf(dir, host));
  }
  writeFileSync(join(dir, 'rabbit/enabled_plugins'), '[].\n');

  // the migrated schemas (built once per venv), then what this run adds: keys and cell mappings
  const templates = await ensureTemplates(venv, log, startTimeoutMs);
  const copies: [string, string][] = [
    ['keystone.sqlite', 'keystone.sqlite'],
    ['placement.sqlite', 'placement.sqlite'],
    ['nova_api.sqlite', 'nova_api.sqlite'],
    ['nova_cell.sqlite', 'nova_cell0.sqlite'],
    ['nova_cell.sqlite', 'nova_cell1.sqlite'],
  ];
  for (const [from, to] of copies) {
    copyFileSync(join(templates, from), join(dir, 'db', to));
  }
  writeFernetKeys(join(dir, 'etc/keystone/fernet-keys'));
  writeFernetKeys(join(dir, 'etc/keystone/credential-keys'));
  // what `nova-manage cell_v2 map_cell0` and `create_cell --name cell1` insert (nova/cmd/manage.py)
  const now = new Date().toISOString().replace('T', ' ').replace('Z', '');
  await sqlite(
    venv,
    join(dir, 'db/nova_api.sqlite'),
    Array(2).fill(
      'INSERT INTO cell_mappings (created_at, uuid, name, transport_url, database_connection, disabled) VALUES (?, ?, ?, ?, ?, 0)',
    ) as string[],
    [
      [
        now,
        '00000000-0000-0000-0000-000000000000',
        'cell0',
        'none:///',
        `sqlite:///${dir}/db/nova_cell0.sqlite?timeout=30`,
      ],
      [now, randomUUID(), 'cell1', rabbitUrl(ports), `sqlite:///${dir}/db/nova_cell1.sqlite?timeout=30`],
    ],
  );
  return { dir, ports };
}
