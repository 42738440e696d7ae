// Loads the configuration: defaults (options.ts), then the YAML file named by
// MASAKARI_CONFIG (top-level keys are masakari.conf groups), then generic
// MASAKARI__<GROUP>__<OPTION> variables, then the dedicated variables
// (MASAKARI_NAMESPACE, MASAKARI_LISTEN, ...). Any problem throws ConfigError
// whose message names the group and option, e.g.
//   config: [DEFAULT] host_failure_recovery_threads must be an integer >= 1, got "zero"
// so the process can print it and exit before doing anything else.

import { readFileSync } from 'node:fs';
import { loadAll } from 'js-yaml';
import type { Config } from './config.ts';
import { IGNORED_MASAKARI_OPTIONS, OPTIONS, type GroupName, type OptionSpec } from './options.ts';
import { InvalidValue, isRecord, splitHostPort } from './parsers.ts';

export class ConfigError extends Error {
  constructor(message: string) {
    super(`config: ${message}`);
    this.name = 'ConfigError';
  }
}

export interface LoadedConfig {
  config: Config;
  /** Accepted but ignored masakari.conf options, for the startup log. */
  warnings: string[];
  /** The file read, if any. */
  file: string | undefined;
}

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  readFile?: (path: string) => string;
}

type AnyOptions = Record<string, OptionSpec<unknown>>;
const GROUPS = Object.keys(OPTIONS) as GroupName[];

function optionsOf(group: GroupName): AnyOptions {
  return OPTIONS[group] as unknown as AnyOptions;
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function defaults(): Config {
  const config = {} as Record<string, Record<string, unknown>>;
  for (const group of GROUPS) {
    config[group] = {};
    for (const [name, spec] of Object.entries(optionsOf(group))) config[group][name] = structuredClone(spec.default);
  }
  return config as unknown as Config;
}

/** Edit distance, for "did you mean" on a misspelt option. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}

function closest(word: string, candidates: string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of candidates) {
    const d = distance(word.toLowerCase(), name);
    if (d <= 3 && (!best || d < best.d)) best = { name, d };
  }
  return best?.name;
}

class Builder {
  readonly config = defaults();
  readonly warnings: string[] = [];

  /** Parses and stores one value; `source` is appended for values that came from the environment. */
  set(group: GroupName, option: string, raw: unknown, source?: string): void {
    const spec = optionsOf(group)[option];
    if (!spec) {
      const guess = closest(option, Object.keys(optionsOf(group)));
      throw new ConfigError(
        `[${group}] ${option} is not a known option${guess ? ` (did you mean ${guess}?)` : ''}${source ? ` (${source})` : ''}`,
      );
    }
    try {
      (this.config[group] as Record<string, unknown>)[option] = spec.parser.parse(raw);
    } catch (e) {
      if (!(e instanceof InvalidValue)) throw e;
      throw new ConfigError(`[${group}] ${option} ${e.requirement}, got ${show(raw)}${source ? ` (${source})` : ''}`);
    }
  }
}

function ignoredOption(group: string, option?: string): boolean {
  const ignored = IGNORED_MASAKARI_OPTIONS[group];
  if (ignored === '*') return true;
  return option !== undefined && ignored !== undefined && ignored.includes(option);
}

function readYaml(path: string, readFile: (path: string) => string): Record<string, unknown> {
  let text: string;
  try {
    text = readFile(path);
  } catch (e) {
    throw new ConfigError(`cannot read MASAKARI_CONFIG file ${path}: ${(e as Error).message}`);
  }
  let docs: unknown[];
  try {
    docs = loadAll(text);
  } catch (e) {
    throw new ConfigError(`${path} is not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  if (docs.length === 0 || docs[0] === null) return {};
  if (docs.length > 1) throw new ConfigError(`${path} must hold one YAML document, found ${docs.length}`);
  if (!isRecord(docs[0])) throw new ConfigError(`${path} must be a map of groups (DEFAULT, host_failure, ...)`);
  return docs[0];
}

function applyFile(b: Builder, path: string, data: Record<string, unknown>): void {
  for (const [group, values] of Object.entries(data)) {
    if (ignoredOption(group)) {
      b.warnings.push(`[${group}] is a masakari.conf group this operator does not use; ignored`);
      continue;
    }
    if (!(GROUPS as string[]).includes(group)) {
      throw new ConfigError(`[${group}] in ${path} is not a known group (known: ${GROUPS.join(', ')})`);
    }
    if (values === null) continue;
    if (!isRecord(values)) throw new ConfigError(`[${group}] in ${path} must be a map of options`);
    for (const [option, raw] of Object.entries(values)) {
      if (ignoredOption(group, option)) {
        b.warnings.push(`[${group}] ${option} is a masakari.conf option this operator does not use; ignored`);
        continue;
      }
      b.set(group as GroupName, option, raw);
    }
  }
}

const GENERIC_PREFIX = 'MASAKARI__';

/** MASAKARI__<GROUP>__<OPTION>=value; group and option match case-insensitively. */
function applyGenericEnv(b: Builder, env: NodeJS.ProcessEnv): void {
  for (const [name, value] of Object.entries(env).sort(([a], [z]) => a.localeCompare(z))) {
    if (!name.startsWith(GENERIC_PREFIX) || value === undefined) continue;
    const parts = name.slice(GENERIC_PREFIX.length).split('__');
    if (parts.length !== 2 || !parts[0] || !parts[1]) {
      throw new ConfigError(`${name} must have the form MASAKARI__<GROUP>__<OPTION>`);
    }
    const group = GROUPS.find((g) => g.toLowerCase() === parts[0]!.toLowerCase());
    if (!group) {
      if (ignoredOption(parts[0].toLowerCase())) {
        b.warnings.push(`${name} sets a masakari.conf option this operator does not use; ignored`);
        continue;
      }
      throw new ConfigError(`${name} names group ${parts[0]}, which is not a known group (known: ${GROUPS.join(', ')})`);
    }
    const option = Object.keys(optionsOf(group)).find((o) => o.toLowerCase() === parts[1]!.toLowerCase());
    if (!option && ignoredOption(group, parts[1].toLowerCase())) {
      b.warnings.push(`${name} sets a masakari.conf option this operator does not use; ignored`);
      continue;
    }
    b.set(group, option ?? parts[1].toLowerCase(), value, `set by ${name}`);
  }
}

function applyNamedEnv(b: Builder, env: NodeJS.ProcessEnv): void {
  for (const group of GROUPS) {
    for (const [option, spec] of Object.entries(optionsOf(group))) {
      if (spec.env === undefined) continue;
      const value = env[spec.env];
      if (value !== undefined) b.set(group, option, value, `set by ${spec.env}`);
    }
  }
  const listen = env.MASAKARI_LISTEN;
  if (listen !== undefined) {
    const address = splitHostPort(listen);
    if (!address) {
      throw new ConfigError(`MASAKARI_LISTEN must be host:port with a port between 1 and 65535, got ${show(listen)}`);
    }
    b.set('DEFAULT', 'masakari_api_listen', address.host, 'set by MASAKARI_LISTEN');
    b.set('DEFAULT', 'masakari_api_listen_port', address.port, 'set by MASAKARI_LISTEN');
  }
}

/** Rules that tie options together (client-go's leader-election checks). */
function checkRelations(config: Config): void {
  const { lease_duration, renew_deadline, retry_period } = config.operator;
  if (renew_deadline >= lease_duration) {
    throw new ConfigError(
      `[operator] renew_deadline must be less than lease_duration (${lease_duration}), got ${renew_deadline}`,
    );
  }
  if (retry_period >= renew_deadline) {
    throw new ConfigError(`[operator] retry_period must be less than renew_deadline (${renew_deadline}), got ${retry_period}`);
  }
}

export function loadConfig(opts: LoadOptions = {}): LoadedConfig {
  const env = opts.env ?? process.env;
  const readFile = opts.readFile ?? ((path: string) => readFileSync(path, 'utf8'));
  const b = new Builder();
  const file = env.MASAKARI_CONFIG || undefined;
  if (file) applyFile(b, file, readYaml(file, readFile));
  applyGenericEnv(b, env);
  applyNamedEnv(b, env);
  checkRelations(b.config);
  return { config: b.config, warnings: b.warnings, file };
}

/** [operator] metrics_listen as host and port, for the ops server. */
export function metricsListenAddress(config: Config): { host: string; port: number } {
  const address = splitHostPort(config.operator.metrics_listen);
  if (!address) throw new ConfigError(`[operator] metrics_listen is not host:port: ${config.operator.metrics_listen}`);
  return address;
}

/** [operator] prometheus_listen as host and port; undefined: /metrics stays on metrics_listen. */
export function prometheusListenAddress(config: Config): { host: string; port: number } | undefined {
  if (config.operator.prometheus_listen === null) return undefined;
  const address = splitHostPort(config.operator.prometheus_listen);
  if (!address)
    throw new ConfigError(`[operator] prometheus_listen is not host:port: ${config.operator.prometheus_listen}`);
  return address;
}
