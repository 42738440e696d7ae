// [taskflow_driver_recovery_flows] values: which tasks run before (pre), as
// (main) and after (post) the recovery. Accepted as a YAML map
//   { pre: [disable_compute_service_task], main: [...], post: [] }
// or in Masakari's masakari.conf string form
//   pre:['disable_compute_service_task'],main:['prepare_HA_enabled_instances_task'],post:[]
// (oslo's Dict type without braces; masakari/conf/engine_driver.py), or a
// brace form {pre: [...], ...} (which upstream documents but rejects). Masakari
// fails only when a flow is built and an entry point is missing; here every
// key must be present and every name must be a task of that recovery (the
// names Masakari ships, MASAKARI_TASK_NAMES), so a typo or a misplaced task stops
// the process at start instead of failing a recovery at 3 a.m.

import { load } from 'js-yaml';
import { MASAKARI_TASK_NAMES, type RecoveryFlow } from '../model/recovery-tasks.ts';
import type { TaskLists } from './config.ts';
import { InvalidValue, isRecord, type Parser } from './parsers.ts';

const KNOWN_TASKS = Object.keys(MASAKARI_TASK_NAMES);

const KEYS = ['pre', 'main', 'post'] as const;
const REQUIREMENT = 'must be a map with the keys pre, main and post, each a list of task names';

/** Splits on commas that are not inside [...] or quotes. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '[') depth++;
    else if (c === ']') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  if (quote || depth !== 0) throw new InvalidValue(`${REQUIREMENT} (unbalanced quotes or brackets)`);
  parts.push(text.slice(start));
  return parts;
}

function unquote(item: string): string {
  const t = item.trim();
  if (t.length >= 2 && (t[0] === "'" || t[0] === '"') && t.at(-1) === t[0]) return t.slice(1, -1);
  return t;
}

/** Parses `pre:['a','b'],main:['c'],post:[]` into a plain object of string lists. */
export function parseMasakariTaskString(text: string): Record<string, string[]> {
  const result: Record<string, string[]> = {};
  for (const entry of splitTopLevel(text)) {
    if (entry.trim() === '') continue;
    const colon = entry.indexOf(':');
    if (colon < 0) throw new InvalidValue(`${REQUIREMENT} (entry "${entry.trim()}" has no "key:")`);
    const key = unquote(entry.slice(0, colon));
    const list = entry.slice(colon + 1).trim();
    if (!list.startsWith('[') || !list.endsWith(']')) {
      throw new InvalidValue(`${REQUIREMENT} (the value of ${key} must be in [ ])`);
    }
    if (key in result) throw new InvalidValue(`${REQUIREMENT} (${key} is given twice)`);
    const inner = list.slice(1, -1);
    result[key] = inner.trim() === '' ? [] : splitTopLevel(inner).map(unquote);
  }
  return result;
}

function validate(raw: Record<string, unknown>, flow: RecoveryFlow): TaskLists {
  for (const key of Object.keys(raw)) {
    if (!(KEYS as readonly string[]).includes(key)) throw new InvalidValue(`${REQUIREMENT} (unknown key ${key})`);
  }
  const lists = {} as TaskLists;
  for (const key of KEYS) {
    const value = raw[key];
    if (value === undefined) throw new InvalidValue(`${REQUIREMENT} (${key} is missing)`);
    // `post:` with nothing after it in YAML reads as null: an empty list.
    const items = value === null ? [] : value;
    if (!Array.isArray(items)) throw new InvalidValue(`${REQUIREMENT} (${key} is not a list)`);
    lists[key] = items.map((item) => {
      const owner = typeof item === 'string' ? MASAKARI_TASK_NAMES[item] : undefined;
      if (owner === undefined) {
        throw new InvalidValue(
          `${REQUIREMENT}; ${JSON.stringify(item)} in ${key} is not a known task (known: ${KNOWN_TASKS.join(', ')})`,
        );
      }
      if (owner !== 'any' && owner !== flow) {
        throw new InvalidValue(`${REQUIREMENT}; "${item}" in ${key} belongs to the ${owner} recovery, not the ${flow} recovery`);
      }
      return item as string;
    });
  }
  return lists;
}

export function taskLists(flow: RecoveryFlow): Parser<TaskLists> {
  return {
    describe: "map {pre, main, post} of task lists, or Masakari's string form",
    parse(raw) {
      if (isRecord(raw)) return validate(raw, flow);
      if (typeof raw === 'string' && raw.trim().startsWith('{')) {
        // Brace form, e.g. from an environment variable: read it as a YAML flow map.
        let parsed: unknown;
        try {
          parsed = load(raw);
        } catch {
          throw new InvalidValue(`${REQUIREMENT} (not a valid {...} map)`);
        }
        if (isRecord(parsed)) return validate(parsed, flow);
        throw new InvalidValue(REQUIREMENT);
      }
      if (typeof raw === 'string') return validate(parseMasakariTaskString(raw), flow);
      throw new InvalidValue(REQUIREMENT);
    },
  };
}
