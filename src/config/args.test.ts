import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseRunArgs } from './args.ts';

test('--config-file is repeatable, in both oslo.config spellings, and keeps its order', () => {
  assert.equal(parseRunArgs([]), { configFiles: [] });
  assert.equal(parseRunArgs(['--config-file', '/etc/masakari/masakari.conf', '--config-file=/etc/masakari/site.conf']), {
    configFiles: ['/etc/masakari/masakari.conf', '/etc/masakari/site.conf'],
  });
});

test('a --config-file without a name, or any other argument, is refused', () => {
  assert.equal(parseRunArgs(['--config-file']), { error: '--config-file needs a file name' });
  assert.equal(parseRunArgs(['--config-file=']), { error: '--config-file needs a file name' });
  assert.equal(parseRunArgs(['--config-dir', '/etc/masakari']), { error: 'run: unknown argument "--config-dir"' });
});

test.run();
