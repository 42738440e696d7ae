// Loads the configuration: defaults (options.ts), then the config files (the
// file named by MASAKARI_CONFIG, then each --config-file in order, later ones
// overriding), then generic MASAKARI__<GROUP>__<OPTION> variables, then the
// dedicated variables (MASAKARI_NAMESPACE, MASAKARI_LISTEN, ...). A file is a
// masakari.conf (oslo.config INI, ini.ts) or YAML whose top-level keys are
// masakari.conf groups. Any problem throws ConfigError whose message names the
// group and option, e.g.
//   config: [DEFAULT] host_failure_recovery_threads must be an integer >= 1, got "zero"
// so the process can print it and exit before doing anything else.
//
// Every option Masakari 22 and its libraries register (known-options.ts) is
// accepted; the ones with no effect here are named in one startup warning. A
// name that nothing registers is, in an INI file, a warning with the nearest
// known name, because oslo.config ignores unregistered options and a site's
// masakari.conf must start unchanged; in YAML and MASAKARI__ variables, the
// operator's own formats, it stops the process as before.

import { readFileSync } from 'node:fs';
import { loadAll } from 'js-yaml';
import type { Config } from './config.ts';
import { IniSyntaxError, interpolate, mergeIni, parseIni, type IniFile } from './ini.ts';
import { KNOWN_OPTIONS } from './known-options.ts';
import { OPTIONS, type GroupName, type OptionSpec } from './options.ts';
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
  /** The files read, in order. */
  files: string[];
}

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** --config-file arguments, read after MASAKARI_CONFIG. */
  files?: string[];
  /** The --debug argument: [DEFAULT] debug = true over every file, as oslo.config puts the command line first. */
  debug?: boolean;
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

/** Damerau-Levenshtein distance (optimal string alignment), for "did you mean" on a misspelt name. */
export function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 0; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The nearest candidate within 3 edits (ties: the first), if any. */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of candidates) {
    const d = distance(word.toLowerCase(), name.toLowerCase());
    if (d <= 3 && (!best || d < best.d)) best = { name, d };
  }
  return best?.name;
}

class Builder {
  readonly config = defaults();
  readonly warnings: string[] = [];
  /** group -> options given that have no effect here, for the one startup warning. */
  readonly ineffective = new Map<string, Set<string>>();
  /** "group.option" of every option a file or variable set. */
  readonly given = new Set<string>();

  noEffect(group: string, option: string): void {
    const set = this.ineffective.get(group) ?? new Set<string>();
    set.add(option);
    this.ineffective.set(group, set);
  }

  /** Parses and stores one value; `source` is appended for values that came from the environment. */
  set(group: GroupName, option: string, raw: unknown, source?: string): void {
    const spec = optionsOf(group)[option];
    if (!spec) {
      const guess = closest(option, Object.keys(optionsOf(group)));
      throw new ConfigError(
        `[${group}] ${option} is not a known option${guess ? ` (did you mean ${guess}?)` : ''}${source ? ` (${source})` : ''}`,
      );
    }
    this.given.add(`${group}.${option}`);
    try {
      (this.config[group] as Record<string, unknown>)[option] = spec.parser.parse(raw);
    } catch (e) {
      if (!(e instanceof InvalidValue)) throw e;
      throw new ConfigError(`[${group}] ${option} ${e.requirement}, got ${show(raw)}${source ? ` (${source})` : ''}`);
    }
  }
}

/** A masakari.conf option or group that Masakari or its libraries register but that has no effect here. */
function knownWithoutEffect(group: string, option?: string): boolean {
  const known = KNOWN_OPTIONS[group];
  if (!known) return false;
  if (option === undefined) return !(GROUPS as string[]).includes(group);
  return Object.hasOwn(known, option) && !Object.hasOwn(OPTIONS[group as GroupName] ?? {}, option);
}

function allGroups(): Set<string> {
  return new Set([...GROUPS, ...Object.keys(KNOWN_OPTIONS)]);
}

function optionsIn(group: string): Set<string> {
  return new Set([...Object.keys(KNOWN_OPTIONS[group] ?? {}), ...Object.keys(OPTIONS[group as GroupName] ?? {})]);
}

function readText(path: string, readFile: (path: string) => string): string {
  try {
    return readFile(path);
  } catch (e) {
    throw new ConfigError(`cannot read config file ${path}: ${(e as Error).message}`);
  }
}

/**
 * INI (masakari.conf) or YAML: by extension (.conf, .ini / .yaml, .yml, .json),
 * else by content: a first meaningful line that is a [group] header is INI.
 */
export function isIniFile(path: string, text: string): boolean {
  if (/\.(conf|ini)$/i.test(path)) return true;
  if (/\.(ya?ml|json)$/i.test(path)) return false;
  const first = text.split(/\r?\n/).find((line) => line.trim() !== '' && !/^\s*[#;]/.test(line));
  return first !== undefined && /^\[[A-Za-z0-9_.-]+\]\s*$/.test(first.trim());
}

function readYaml(path: string, text: string): Record<string, unknown> {
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
    if (knownWithoutEffect(group)) {
      for (const option of isRecord(values) ? Object.keys(values) : ['*']) b.noEffect(group, option);
      continue;
    }
    if (!(GROUPS as string[]).includes(group)) {
      const guess = closest(group, allGroups());
      throw new ConfigError(`[${group}] in ${path} is not a known group${guess ? ` (did you mean ${guess}?)` : ''}`);
    }
    if (values === null) continue;
    if (!isRecord(values)) throw new ConfigError(`[${group}] in ${path} must be a map of options`);
    for (const [option, raw] of Object.entries(values)) {
      if (knownWithoutEffect(group, option)) {
        b.noEffect(group, option);
        continue;
      }
      b.set(group as GroupName, option, raw);
    }
  }
}

/**
 * One masakari.conf. `context` is every INI file merged, for $references that
 * point into another file, as oslo.config resolves them.
 */
function applyIni(b: Builder, file: IniFile, context: IniFile): void {
  for (const [group, options] of file) {
    const ours = (GROUPS as string[]).includes(group);
    if (!ours && !KNOWN_OPTIONS[group]) {
      const guess = closest(group, allGroups());
      const first = [...options.values()][0];
      b.warnings.push(
        `[${group}]: unknown group${guess ? `; did you mean ${guess}?` : ''}` +
          `${first ? ` (${first.path}:${first.line})` : ''}; its options are ignored, as oslo.config ignores them`,
      );
      continue;
    }
    for (const [option, value] of options) {
      const at = `${value.path}:${value.line}`;
      if (ours && Object.hasOwn(OPTIONS[group as GroupName], option)) {
        let text: string;
        try {
          text = interpolate(context, group, option, value.values.at(-1)!);
        } catch (e) {
          if (e instanceof IniSyntaxError) throw new ConfigError(e.message);
          throw e;
        }
        b.set(group as GroupName, option, text, `at ${at}`);
      } else if (knownWithoutEffect(group, option)) {
        b.noEffect(group, option);
      } else if (group === 'operator') {
        // The operator's own group has no oslo.config behaviour to match: a typo there stops the process.
        const guess = closest(option, optionsIn(group));
        throw new ConfigError(`[${group}] ${option} is not a known option${guess ? ` (did you mean ${guess}?)` : ''} (at ${at})`);
      } else {
        const guess = closest(option, optionsIn(group));
        b.warnings.push(
          `[${group}] ${option}: unknown option${guess ? `; did you mean ${guess}?` : ''} (${at}); ignored, as oslo.config ignores it`,
        );
      }
    }
  }
}

function applyFiles(b: Builder, paths: string[], readFile: (path: string) => string): void {
  const texts = paths.map((path) => ({ path, text: readText(path, readFile) }));
  const ini = new Map<string, IniFile>();
  for (const { path, text } of texts) {
    if (!isIniFile(path, text)) continue;
    try {
      ini.set(path, parseIni(text, path));
    } catch (e) {
      if (e instanceof IniSyntaxError) throw new ConfigError(`${e.message} (not a valid masakari.conf)`);
      throw e;
    }
  }
  const context = mergeIni([...ini.values()]);
  for (const { path, text } of texts) {
    const parsed = ini.get(path);
    if (parsed) applyIni(b, parsed, context);
    else applyFile(b, path, readYaml(path, text));
  }
}

/** `debug = true` (oslo.log) lowers the log level to debug unless log_level is set. */
function applyDerived(b: Builder): void {
  if (b.config.DEFAULT.debug && !b.given.has('operator.log_level')) b.config.operator.log_level = 'debug';
}

function ineffectiveWarning(b: Builder): string | undefined {
  if (b.ineffective.size === 0) return undefined;
  const groups = [...b.ineffective].map(([group, options]) =>
    options.has('*') ? `[${group}] (whole group)` : `[${group}] ${[...options].sort().join(', ')}`,
  );
  return `masakari.conf options with no effect in this operator, ignored: ${groups.join('; ')} (docs/configuration.md "Using an existing masakari.conf")`;
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
      const known = Object.keys(KNOWN_OPTIONS).find((g) => g.toLowerCase() === parts[0]!.toLowerCase());
      if (known) {
        b.noEffect(known, parts[1].toLowerCase());
        continue;
      }
      const guess = closest(parts[0], allGroups());
      throw new ConfigError(`${name} names group ${parts[0]}, which is not a known group${guess ? ` (did you mean ${guess}?)` : ''}`);
    }
    const option = Object.keys(optionsOf(group)).find((o) => o.toLowerCase() === parts[1]!.toLowerCase());
    if (!option && knownWithoutEffect(group, parts[1].toLowerCase())) {
      b.noEffect(group, parts[1].toLowerCase());
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
  const files = [...(env.MASAKARI_CONFIG ? [env.MASAKARI_CONFIG] : []), ...(opts.files ?? [])];
  applyFiles(b, files, readFile);
  if (opts.debug) b.set('DEFAULT', 'debug', 'true', 'set by --debug');
  applyGenericEnv(b, env);
  applyNamedEnv(b, env);
  applyDerived(b);
  checkRelations(b.config);
  const summary = ineffectiveWarning(b);
  return { config: b.config, warnings: summary ? [summary, ...b.warnings] : b.warnings, files };
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
