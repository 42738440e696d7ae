import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { componentImporter, StartupError } from './components.ts';

const dir = mkdtempSync(join(tmpdir(), 'components-test-'));
mkdirSync(join(dir, 'api'));
mkdirSync(join(dir, 'engine'));
writeFileSync(
  join(dir, 'api', 'component.mjs'),
  'export async function createComponent() { return { name: "api" }; }\n',
);
writeFileSync(join(dir, 'engine', 'component.mjs'), 'export const somethingElse = 1;\n');
const load = componentImporter(pathToFileURL(`${dir}/`), '.mjs');

async function failure(name: 'api' | 'engine' | 'remediation', loader = load): Promise<string> {
  try {
    await loader(name);
  } catch (e) {
    assert.instance(e, StartupError);
    return (e as Error).message;
  }
  assert.unreachable('expected a StartupError');
  return '';
}

test('a present module yields its createComponent', async () => {
  const factory = await load('api');
  assert.type(factory, 'function');
});

test('a missing component module is a startup error naming the module and the variable', async () => {
  assert.is(
    await failure('remediation'),
    'component remediation: module src/remediation/component.mjs is not part of this build; remove remediation from MASAKARI_COMPONENTS',
  );
});

test('a module without createComponent is a startup error naming it', async () => {
  assert.is(await failure('engine'), 'component engine: src/engine/component.mjs does not export createComponent(ctx)');
});

test.after(() => rmSync(dir, { recursive: true, force: true }));

test.run();
