// Authorisation as Masakari does it: oslo.policy rules named
// os_masakari_api:<resource>:<action> (masakari/policies/*.py), with
// Masakari's defaults, overridable by a YAML or JSON policy file
// ([oslo_policy]/policy_file). The evaluator reads oslo.policy's check
// language: @ ! rule:x role:x is_admin:True field:%(target)s, and/or/not,
// parentheses, and the legacy list-of-lists form.

import { readFileSync, statSync } from 'node:fs';
import { load as loadYaml } from 'js-yaml';
import { PolicyNotAuthorized } from '../domain/errors.ts';
import { systemClock } from '../time/clock.ts';

export const MASAKARI_API = 'os_masakari_api';
const ADMIN_API = 'rule:admin_api';

/** Masakari 22.0.0's registered defaults. */
export const DEFAULT_RULES: Readonly<Record<string, string>> = {
  context_is_admin: 'role:admin',
  admin_or_owner: 'is_admin:True or project_id:%(project_id)s',
  admin_api: 'is_admin:True',
  'os_masakari_api:extensions:index': ADMIN_API,
  'os_masakari_api:extensions:detail': ADMIN_API,
  'os_masakari_api:extensions:discoverable': ADMIN_API,
  'os_masakari_api:os-hosts:index': ADMIN_API,
  'os_masakari_api:os-hosts:detail': ADMIN_API,
  'os_masakari_api:os-hosts:create': ADMIN_API,
  'os_masakari_api:os-hosts:update': ADMIN_API,
  'os_masakari_api:os-hosts:delete': ADMIN_API,
  'os_masakari_api:os-hosts:discoverable': ADMIN_API,
  'os_masakari_api:notifications:index': ADMIN_API,
  'os_masakari_api:notifications:detail': ADMIN_API,
  'os_masakari_api:notifications:create': ADMIN_API,
  'os_masakari_api:notifications:discoverable': ADMIN_API,
  'os_masakari_api:segments:index': ADMIN_API,
  'os_masakari_api:segments:detail': ADMIN_API,
  'os_masakari_api:segments:create': ADMIN_API,
  'os_masakari_api:segments:update': ADMIN_API,
  'os_masakari_api:segments:delete': ADMIN_API,
  'os_masakari_api:segments:discoverable': ADMIN_API,
  'os_masakari_api:versions:index': '@',
  'os_masakari_api:versions:discoverable': '@',
  'os_masakari_api:vmoves:index': ADMIN_API,
  'os_masakari_api:vmoves:detail': ADMIN_API,
  'os_masakari_api:vmoves:discoverable': ADMIN_API,
};

/** What the policy engine knows about the caller (oslo.context to_policy_values). */
export type Credentials = Record<string, unknown> & { roles: string[] };
export type Target = Record<string, unknown>;

// ------------------------------------------------------------------ parser

type Check =
  | { kind: 'true' }
  | { kind: 'false' }
  | { kind: 'rule'; name: string }
  | { kind: 'role'; role: string }
  | { kind: 'generic'; key: string; match: string }
  | { kind: 'not'; check: Check }
  | { kind: 'and'; checks: Check[] }
  | { kind: 'or'; checks: Check[] };

export class PolicySyntaxError extends Error {}

function tokenize(text: string): string[] {
  // oslo.policy splits on whitespace and peels parentheses off tokens.
  const tokens: string[] = [];
  for (const raw of text.split(/\s+/).filter(Boolean)) {
    let tok = raw;
    while (tok.startsWith('(')) {
      tokens.push('(');
      tok = tok.slice(1);
    }
    let closing = 0;
    while (tok.endsWith(')')) {
      closing++;
      tok = tok.slice(0, -1);
    }
    if (tok) tokens.push(tok);
    for (let i = 0; i < closing; i++) tokens.push(')');
  }
  return tokens;
}

function atom(token: string): Check {
  if (token === '@') return { kind: 'true' };
  if (token === '!') return { kind: 'false' };
  const colon = token.indexOf(':');
  if (colon < 0) throw new PolicySyntaxError(`bad check "${token}"`);
  const key = token.slice(0, colon);
  const match = token.slice(colon + 1);
  if (key === 'rule') return { kind: 'rule', name: match };
  if (key === 'role') return { kind: 'role', role: match };
  return { kind: 'generic', key, match };
}

/** Parses an oslo.policy check string ('' means always allowed). */
export function parseCheck(text: string): Check {
  const tokens = tokenize(text);
  if (tokens.length === 0) return { kind: 'true' };
  let pos = 0;
  const peek = () => tokens[pos];
  const next = () => tokens[pos++];

  /** Operands joined by `op` ('or' binds looser than 'and'); a single one stands alone. */
  const parseJoined = (op: 'or' | 'and', operand: () => Check): Check => {
    const checks = [operand()];
    while (peek() === op) {
      next();
      checks.push(operand());
    }
    return checks.length === 1 ? checks[0]! : { kind: op, checks };
  };
  const parseOr = (): Check => parseJoined('or', parseAnd);
  const parseAnd = (): Check => parseJoined('and', parseNot);
  const parseNot = (): Check => {
    if (peek() === 'not') {
      next();
      return { kind: 'not', check: parseNot() };
    }
    const tok = next();
    if (tok === undefined) throw new PolicySyntaxError('unexpected end of rule');
    if (tok === '(') {
      const inner = parseOr();
      if (next() !== ')') throw new PolicySyntaxError('missing )');
      return inner;
    }
    return atom(tok);
  };
  const check = parseOr();
  if (pos !== tokens.length) throw new PolicySyntaxError(`unexpected "${tokens[pos]}"`);
  return check;
}

/** The legacy JSON form: a list of alternatives, each a list of checks that must all pass. */
function fromLegacyList(rule: unknown[]): Check {
  if (rule.length === 0) return { kind: 'true' };
  return {
    kind: 'or',
    checks: rule.map((alt) =>
      Array.isArray(alt) ? { kind: 'and', checks: alt.map((c) => parseCheck(String(c))) } : parseCheck(String(alt)),
    ),
  };
}

/** '%(name)s' substitution from the target, as Python's % operator does; undefined on a missing key. */
function substitute(template: string, target: Target): string | undefined {
  let missing = false;
  const out = template.replace(/%\(([^)]+)\)s/g, (_m, key: string) => {
    if (!(key in target)) {
      missing = true;
      return '';
    }
    return pyText(target[key]);
  });
  return missing ? undefined : out;
}

function pyText(v: unknown): string {
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (v === null || v === undefined) return 'None';
  return String(v);
}

/** Dotted lookup in the credentials (oslo.policy GenericCheck). */
function lookup(creds: Credentials, dotted: string): unknown {
  let cur: unknown = creds;
  for (const part of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object' || !(part in (cur as object))) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

// ------------------------------------------------------------------ enforcer

export interface PolicyOptions {
  /** [oslo_policy]/policy_file; rules there override the defaults. Re-read when it changes. */
  policyFile?: string | null;
  /** Extra rules (tests). */
  overrides?: Record<string, string>;
}

export class PolicyEnforcer {
  private rules = new Map<string, Check>();
  private fileStamp = '';
  private lastStat = 0;

  constructor(private readonly opts: PolicyOptions = {}) {
    this.load();
  }

  /** Loads defaults + file + overrides; a broken file fails loudly at start-up. */
  private load(): void {
    const merged: Record<string, unknown> = { ...DEFAULT_RULES };
    if (this.opts.policyFile) Object.assign(merged, readPolicyFile(this.opts.policyFile));
    Object.assign(merged, this.opts.overrides ?? {});
    const rules = new Map<string, Check>();
    for (const [name, rule] of Object.entries(merged)) {
      rules.set(name, Array.isArray(rule) ? fromLegacyList(rule) : parseCheck(String(rule ?? '')));
    }
    this.rules = rules;
    if (this.opts.policyFile) this.fileStamp = stamp(this.opts.policyFile);
  }

  /** oslo.policy reloads a changed policy file; we look at most once a second. */
  private maybeReload(): void {
    if (!this.opts.policyFile) return;
    const now = systemClock.now().getTime();
    if (now - this.lastStat < 1000) return;
    this.lastStat = now;
    if (stamp(this.opts.policyFile) !== this.fileStamp) {
      try {
        this.load();
      } catch (_e) {
        // Keep the last good rules: a half-written file must not open or close the API.
      }
    }
  }

  private evaluate(check: Check, target: Target, creds: Credentials, depth = 0): boolean {
    if (depth > 50) return false;
    switch (check.kind) {
      case 'true':
        return true;
      case 'false':
        return false;
      case 'rule': {
        const rule = this.rules.get(check.name);
        return rule ? this.evaluate(rule, target, creds, depth + 1) : false;
      }
      case 'role': {
        const role = substitute(check.role, target);
        if (role === undefined) return false;
        return creds.roles.some((r) => r.toLowerCase() === role.toLowerCase());
      }
      case 'generic': {
        const match = substitute(check.match, target);
        if (match === undefined) return false;
        const value = lookup(creds, check.key);
        if (Array.isArray(value)) return value.some((v) => pyText(v) === match);
        return value !== undefined && pyText(value) === match;
      }
      case 'not':
        return !this.evaluate(check.check, target, creds, depth + 1);
      case 'and':
        return check.checks.every((c) => this.evaluate(c, target, creds, depth + 1));
      case 'or':
        return check.checks.some((c) => this.evaluate(c, target, creds, depth + 1));
    }
  }

  /** True when the rule allows the caller. An unknown rule denies. */
  check(rule: string, target: Target, creds: Credentials): boolean {
    this.maybeReload();
    const check = this.rules.get(rule);
    return check ? this.evaluate(check, target, creds) : false;
  }

  /** context.can(): throws PolicyNotAuthorized (403) when denied. */
  authorize(rule: string, target: Target, creds: Credentials): void {
    if (!this.check(rule, target, creds)) throw new PolicyNotAuthorized(rule);
  }
}

function stamp(file: string): string {
  try {
    const st = statSync(file);
    return `${st.mtimeMs}:${st.size}`;
  } catch (_e) {
    return 'missing';
  }
}

/** Reads a policy file (YAML is a superset of JSON, so one parser serves both). */
export function readPolicyFile(file: string): Record<string, unknown> {
  const doc = loadYaml(readFileSync(file, 'utf8'));
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new PolicySyntaxError(`${file}: not a mapping of rules`);
  return doc as Record<string, unknown>;
}
