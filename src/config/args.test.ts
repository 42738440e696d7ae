import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseRunArgs } from './args.ts';

test('--config-file is repeatable, in both oslo.config spellings, and keeps its order', () => {
  assert.equal(parseRunArgs([]), { configFiles: [], debug: false });
  assert.equal(parseRunArgs(['--config-file', '/etc/masakari/masakari.conf', '--config-file=/etc/masakari/site.conf']), {
    configFiles: ['/etc/masakari/masakari.conf', '/etc/masakari/site.conf'],
    debug: false,
  });
});

test('a --config-file without a name, or any other argument, is refused', () => {
  assert.equal(parseRunArgs(['--config-file']), { error: '--config-file needs a file name' });
  assert.equal(parseRunArgs(['--config-file=']), { error: '--config-file needs a file name' });
  assert.equal(parseRunArgs(['--config-dir', '/etc/masakari']), { error: 'run: unknown argument "--config-dir"' });
});

test("devstack's masakari-api command line (--config-file=FILE --debug) is accepted; --debug and -d are oslo.log's switch", () => {
  // devstack/plugin.sh: run_process masakari-api "$MASAKARI_BIN_DIR/masakari-api --config-file=$MASAKARI_CONF --debug"
  assert.equal(parseRunArgs(['--config-file=/etc/masakari/masakari.conf', '--debug']), {
    configFiles: ['/etc/masakari/masakari.conf'],
    debug: true,
  });
  assert.equal(parseRunArgs(['-d']), { configFiles: [], debug: true });
});

test.run();
