import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { UsageError } from '../usage.ts';
import { parseImportArgs } from './args.ts';

test('defaults: microversion 1.3, pages of 500, 30 s per request, table output, writes', () => {
  const o = parseImportArgs(['--from', 'http://masakari:15868']);
  assert.equal(o, {
    from: 'http://masakari:15868',
    dryRun: false,
    insecure: false,
    microversion: '1.3',
    verifyHosts: false,
    pageSize: 500,
    timeoutMs: 30_000,
    output: 'table',
    configFiles: [],
    help: false,
  });
});

test('every option is read', () => {
  const o = parseImportArgs([
    '--from=https://cloud/instance-ha',
    '-n',
    'ha',
    '--dry-run',
    '--os-token',
    'gAAAA',
    '--insecure',
    '--microversion',
    '1.2',
    '--verify-hosts',
    '--page-size',
    '50',
    '--timeout',
    '5',
    '-o',
    'json',
    '--kubeconfig',
    '/tmp/kc',
    '--config-file',
    '/etc/masakari/masakari.conf',
    '--config-file=/etc/masakari/site.conf',
  ]);
  assert.equal(o, {
    from: 'https://cloud/instance-ha',
    namespace: 'ha',
    dryRun: true,
    osToken: 'gAAAA',
    insecure: true,
    microversion: '1.2',
    verifyHosts: true,
    pageSize: 50,
    timeoutMs: 5000,
    output: 'json',
    kubeconfig: '/tmp/kc',
    configFiles: ['/etc/masakari/masakari.conf', '/etc/masakari/site.conf'],
    help: false,
  });
});

test('--help needs no --from', () => {
  assert.is(parseImportArgs(['--help']).help, true);
});

test('mistakes are usage errors that name the option', () => {
  const cases: Array<[string[], RegExp]> = [
    [[], /--from <masakari URL> is required/],
    [['--from', 'http://m', '--microversion', '1.1'], /--microversion must be 1.2 or 1.3/],
    [['--from', 'http://m', '--page-size', '0'], /--page-size must be an integer from 1 to 1000/],
    [['--from', 'http://m', '--page-size', '1001'], /--page-size must be an integer from 1 to 1000/],
    [['--from', 'http://m', '--timeout', '2.5'], /--timeout must be an integer/],
    [['--from', 'http://m', '--output', 'yaml'], /--output must be table or json/],
    [['--from', 'http://m', '--os-token', ' '], /--os-token must not be empty/],
    [['--from', 'http://m', '--bogus'], /bogus/],
    [['--from', 'http://m', 'extra'], /extra/],
  ];
  for (const [argv, message] of cases) {
    try {
      parseImportArgs(argv);
      assert.unreachable(`${argv.join(' ')} should be refused`);
    } catch (e) {
      assert.instance(e, UsageError, argv.join(' '));
      assert.match((e as Error).message, message);
    }
  }
});

test.run();
