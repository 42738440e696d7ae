// Fuzzing the config loader: seeded random values for every option (through
// MASAKARI__<GROUP>__<OPTION>), for the dedicated variables, and random YAML
// and masakari.conf (INI) files. Whatever comes in, loadConfig returns a configuration or throws a
// ConfigError naming the problem; never another exception (which main.ts would
// print as a crash with a stack trace).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dump } from 'js-yaml';
import { ConfigError, loadConfig } from './load.ts';
import { OPTIONS } from './options.ts';
import { Fuzzer } from '../domain/testing/fuzz.ts';

const SEED = Number(process.env.MASAKARI_FUZZ_SEED ?? 20261201);
const CASES = 3_000;
const NAMED = ['MASAKARI_LISTEN', 'MASAKARI_NAMESPACE', 'MASAKARI_COMPONENTS', 'MASAKARI_AUTH_STRATEGY', 'MASAKARI_LOG_LEVEL'];

function value(f: Fuzzer): string {
  return f.pick([
    () => f.string(),
    () => String(f.json(0)),
    () => JSON.stringify(f.json(2)),
    () => f.pick(['0', '-1', '65536', '1e3', 'true', 'False', 'keystone', 'noauth2', '127.0.0.1:0', '[::1]:80', ':']),
  ])();
}

test(`${CASES} random configurations (seed ${SEED}): a configuration or a ConfigError, nothing else`, () => {
  const f = new Fuzzer(SEED);
  const options = Object.entries(OPTIONS).flatMap(([group, opts]) => Object.keys(opts).map((o) => [group, o]));
  let errors = 0;
  for (let i = 0; i < CASES; i++) {
    const env: Record<string, string> = {};
    for (let k = f.int(4); k > 0; k--) {
      const [group, option] = f.pick(options) as [string, string];
      env[`MASAKARI__${f.chance(0.9) ? group : f.string()}__${f.chance(0.9) ? option : f.string()}`] = value(f);
    }
    if (f.chance(0.3)) env[f.pick(NAMED)] = value(f);
    let file: string | undefined;
    if (f.chance(0.3)) {
      env.MASAKARI_CONFIG = '/etc/masakari/fuzz.yaml';
      const doc = f.chance(0.5)
        ? Object.fromEntries(
            Array.from({ length: f.int(3) + 1 }, () => {
              const [group, option] = f.pick(options) as [string, string];
              return [group, { [option]: f.json(1) }];
            }),
          )
        : f.json(3);
      file = f.chance(0.9) ? dump(doc) : f.string();
    }
    try {
      loadConfig({ env, readFile: () => file ?? '' });
    } catch (e) {
      errors += 1;
      assert.instance(e, ConfigError, `case ${i} (seed ${SEED}): ${JSON.stringify({ env, file })} → ${String(e)}`);
    }
  }
  assert.ok(errors > 0 && errors < CASES, `${errors} refused of ${CASES}: the generator reaches both outcomes`);
});

/** A masakari.conf built from option lines, headers, comments, continuations, $references and noise. */
function iniText(f: Fuzzer, options: string[][]): string {
  const lines: string[] = [];
  for (let k = f.int(8) + 1; k > 0; k--) {
    const [group, option] = f.pick(options) as [string, string];
    lines.push(
      f.pick([
        () => `[${f.chance(0.9) ? group : f.string()}]`,
        () => `${option} = ${value(f)}`,
        () => `${option}: $${f.pick([option, 'DEFAULT.host', '{x', '$', f.string()])}`,
        () => `  ${value(f)}`,
        () => f.pick(['# comment', '; comment', '', '[', '=', f.string()]),
      ])(),
    );
  }
  return lines.join(f.pick(['\n', '\r\n']));
}

test(`${CASES} random masakari.conf files (seed ${SEED}): a configuration or a ConfigError, nothing else`, () => {
  const f = new Fuzzer(SEED + 1);
  const options = Object.entries(OPTIONS).flatMap(([group, opts]) => Object.keys(opts).map((o) => [group, o]));
  let errors = 0;
  for (let i = 0; i < CASES; i++) {
    const text = iniText(f, options);
    try {
      loadConfig({ env: {}, files: ['/etc/masakari/fuzz.conf'], readFile: () => text });
    } catch (e) {
      errors += 1;
      assert.instance(e, ConfigError, `case ${i} (seed ${SEED}): ${JSON.stringify(text)} → ${String(e)}`);
    }
  }
  assert.ok(errors > 0 && errors < CASES, `${errors} refused of ${CASES}: the generator reaches both outcomes`);
});

test.run();
