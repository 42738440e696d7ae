// The oslo.policy check language and Masakari's defaults.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseCheck, PolicyEnforcer, PolicySyntaxError } from './policy.ts';

const admin = { user_id: 'u', project_id: 'p1', roles: ['Admin'], is_admin: true };
const member = { user_id: 'v', project_id: 'p2', roles: ['member'], is_admin: false };

test("every os_masakari_api rule defaults to admin_api, versions to '@'", () => {
  const p = new PolicyEnforcer();
  for (const rule of [
    'segments:index',
    'os-hosts:create',
    'notifications:detail',
    'vmoves:index',
    'extensions:index',
  ]) {
    assert.ok(p.check(`os_masakari_api:${rule}`, {}, admin), rule);
    assert.not.ok(p.check(`os_masakari_api:${rule}`, {}, member), rule);
  }
  assert.ok(p.check('os_masakari_api:versions:index', {}, member));
  assert.ok(p.check('context_is_admin', {}, admin), 'role names compare case-insensitively');
  assert.not.ok(p.check('os_masakari_api:no-such-rule', {}, admin));
});

test("authorize throws Masakari's PolicyNotAuthorized text", () => {
  const p = new PolicyEnforcer();
  assert.throws(
    () => p.authorize('os_masakari_api:segments:index', {}, member),
    /Policy doesn't allow os_masakari_api:segments:index to be performed\./,
  );
});

test('and/or/not, parentheses, targets and generic checks', () => {
  const p = new PolicyEnforcer({
    overrides: {
      owner: 'project_id:%(project_id)s',
      r1: '(role:member or role:reader) and not is_admin:True',
      r2: 'rule:owner and user_id:%(user_id)s',
      r3: '!',
      r4: '',
      r5: 'project_id:%(missing)s',
    },
  });
  assert.ok(p.check('r1', {}, member));
  assert.not.ok(p.check('r1', {}, admin));
  assert.ok(p.check('r2', { project_id: 'p2', user_id: 'v' }, member));
  assert.not.ok(p.check('r2', { project_id: 'p1', user_id: 'v' }, member));
  assert.not.ok(p.check('r3', {}, admin));
  assert.ok(p.check('r4', {}, member));
  assert.not.ok(p.check('r5', {}, member));
  assert.ok(p.check('admin_or_owner', { project_id: 'p2' }, member));
});

test('a JSON policy file may use the legacy list-of-lists form; syntax errors are loud', () => {
  const dir = mkdtempSync(join(tmpdir(), 'masakari-policy-'));
  const file = join(dir, 'policy.json');
  writeFileSync(
    file,
    JSON.stringify({
      'os_masakari_api:segments:index': [['role:member', 'project_id:%(project_id)s'], ['is_admin:True']],
    }),
  );
  const p = new PolicyEnforcer({ policyFile: file });
  assert.ok(p.check('os_masakari_api:segments:index', { project_id: 'p2' }, member));
  assert.not.ok(p.check('os_masakari_api:segments:index', { project_id: 'p1' }, member));
  assert.ok(p.check('os_masakari_api:segments:index', {}, admin));
  assert.throws(
    () => parseCheck('role:a and'),
    (e: unknown) => e instanceof PolicySyntaxError,
  );
  assert.throws(
    () => parseCheck('(role:a'),
    (e: unknown) => e instanceof PolicySyntaxError,
  );
});

test.run();
