import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { thrown } from '../testing/expect-error.ts';
import { IniSyntaxError, interpolate, mergeIni, parseIni } from './ini.ts';

function values(text: string, group: string, option: string): string[] | undefined {
  return parseIni(text, 'masakari.conf').get(group)?.get(option)?.values;
}

const syntaxError = (text: string): string =>
  thrown(() => parseIni(text, '/etc/masakari/masakari.conf'), IniSyntaxError).message;

test('groups, key = value and key: value, # and ; comments', () => {
  const text = '# a comment\n[DEFAULT]\n; another\ndebug = True\nlog_dir: /var/log\n\n[host_failure]\nevacuate_all_instances=false\n';
  assert.equal(values(text, 'DEFAULT', 'debug'), ['True']);
  assert.equal(values(text, 'DEFAULT', 'log_dir'), ['/var/log']);
  assert.equal(values(text, 'host_failure', 'evacuate_all_instances'), ['false']);
});

test('group names other than DEFAULT are read in lower case, as oslo.config normalizes them', () => {
  const text = '[Keystone_AuthToken]\nregion_name = R1\n[default]\nx = 1\n';
  assert.equal(values(text, 'keystone_authtoken', 'region_name'), ['R1']);
  assert.equal(values(text, 'default', 'x'), ['1']);
});

test('an inline # is part of the value, as in oslo.config', () => {
  assert.equal(values('[DEFAULT]\nservice_disable_reason = down # by masakari\n', 'DEFAULT', 'service_disable_reason'), [
    'down # by masakari',
  ]);
});

test('indented lines continue the value, joined with newlines', () => {
  const text = '[host_failure]\nskip_servers_with_name = ^test-\n    ^scratch-\n  # not a value\n\tkeep$\nother = 1\n';
  assert.equal(values(text, 'host_failure', 'skip_servers_with_name'), ['^test-\n^scratch-\nkeep$']);
  assert.equal(values(text, 'host_failure', 'other'), ['1']);
});

test('an empty value is an empty string, and one pair of surrounding quotes is stripped', () => {
  assert.equal(values('[DEFAULT]\nnova_ca_certificates_file =\n', 'DEFAULT', 'nova_ca_certificates_file'), ['']);
  assert.equal(values('[DEFAULT]\nx = "a b"\ny = \'c\'\nz = "d\n', 'DEFAULT', 'x'), ['a b']);
  assert.equal(values('[DEFAULT]\ny = \'c\'\n', 'DEFAULT', 'y'), ['c']);
  assert.equal(values('[DEFAULT]\nz = "d\n', 'DEFAULT', 'z'), ['"d']);
});

test('a repeated key keeps every value in order (MultiStrOpt); a repeated group continues it', () => {
  const text = '[oslo_policy]\npolicy_dirs = a\n[DEFAULT]\nx = 1\n[oslo_policy]\npolicy_dirs = b\n';
  assert.equal(values(text, 'oslo_policy', 'policy_dirs'), ['a', 'b']);
});

test('syntax errors name the file and the line', () => {
  assert.is(syntaxError('[DEFAULT]\ndebug\n'), '/etc/masakari/masakari.conf:2: expected "name = value", got "debug"');
  assert.is(syntaxError('debug = true\n'), '/etc/masakari/masakari.conf:1: option debug comes before any [group] header');
  assert.is(syntaxError('[DEFAULT\n'), '/etc/masakari/masakari.conf:1: malformed group header "[DEFAULT"');
  assert.is(syntaxError('[DEFAULT]\n\n   orphan\n'), '/etc/masakari/masakari.conf:3: indented line "orphan" continues no option');
});

test('later files override earlier ones key by key', () => {
  const merged = mergeIni([parseIni('[DEFAULT]\na = 1\nb = 2\n', 'one'), parseIni('[DEFAULT]\nb = 3\n', 'two')]);
  assert.equal(merged.get('DEFAULT')?.get('a')?.values.at(-1), '1');
  assert.equal(merged.get('DEFAULT')?.get('b')?.values.at(-1), '3');
  assert.is(merged.get('DEFAULT')?.get('b')?.path, 'two');
});

test('$name and ${name} come from the same group, then [DEFAULT]; ${group.name} from that group; $$ is a $', () => {
  const file = parseIni(
    '[DEFAULT]\nstate_path = /var/lib/masakari\nhost = ctl1\n[oslo_concurrency]\nhost = ctl2\nlock_path = $state_path/lock/$host\n[x]\ny = ${oslo_concurrency.lock_path}-${host}\nprice = $$5\n',
    'masakari.conf',
  );
  assert.is(interpolate(file, 'oslo_concurrency', 'lock_path', '$state_path/lock/$host'), '/var/lib/masakari/lock/ctl2');
  assert.is(interpolate(file, 'x', 'y', '${oslo_concurrency.lock_path}-${host}'), '/var/lib/masakari/lock/ctl2-ctl1');
  assert.is(interpolate(file, 'x', 'price', '$$5'), '$5');
});

test('a reference to an unset option or to itself is an error naming the option and line', () => {
  const file = parseIni('[DEFAULT]\na = $nowhere\nb = $c\nc = $b\n', 'masakari.conf');
  assert.throws(
    () => interpolate(file, 'DEFAULT', 'a', '$nowhere'),
    (e: Error) => e.message === 'masakari.conf:2: [DEFAULT] a: $nowhere is not set in any config file (write $$ for a literal $)',
  );
  assert.throws(() => interpolate(file, 'DEFAULT', 'b', '$c'), /refers back to itself/);
});

test.run();
