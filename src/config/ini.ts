// masakari.conf as oslo.config reads it (oslo_config/iniparser.py and
// cfg.py's ConfigParser): `[group]` headers, `key = value` or `key: value`,
// whole-line comments starting with # or ;, continuation lines (indented)
// joined with a newline, one pair of surrounding quotes stripped. A key given
// twice in one file keeps every value in order (a MultiStrOpt reads them all,
// any other option the last one). `$name`, `${name}` and `${group.name}` are
// substituted when a value is used (interpolate), `$$` is a literal $.

export class IniSyntaxError extends Error {
  constructor(
    readonly path: string,
    readonly line: number,
    detail: string,
  ) {
    super(`${path}:${line}: ${detail}`);
    this.name = 'IniSyntaxError';
  }
}

export interface IniValue {
  /** Every value given for the key, in file order. */
  values: string[];
  path: string;
  /** Line of the last value. */
  line: number;
}

/** group -> option -> value; group and option names as written. */
export type IniFile = Map<string, Map<string, IniValue>>;

function unquote(value: string): string {
  if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.at(-1) === value[0]) {
    return value.slice(1, -1);
  }
  return value;
}

export function parseIni(text: string, path: string): IniFile {
  const file: IniFile = new Map();
  let group: Map<string, IniValue> | undefined;
  // The option a continuation line extends, and its parts so far.
  let open: { entry: IniValue; parts: string[] } | undefined;
  const close = () => {
    if (open) open.entry.values[open.entry.values.length - 1] = unquote(open.parts.join('\n'));
    open = undefined;
  };
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, index) => {
    const lineNo = index + 1;
    if (raw.trim() === '') {
      close();
      return;
    }
    if (/^\s/.test(raw)) {
      const part = raw.trim();
      if (open) {
        if (!part.startsWith('#') && !part.startsWith(';')) open.parts.push(part);
        return;
      }
      if (part.startsWith('#') || part.startsWith(';')) return;
      throw new IniSyntaxError(path, lineNo, `indented line ${JSON.stringify(part)} continues no option`);
    }
    if (raw.startsWith('#') || raw.startsWith(';')) return;
    close();
    if (raw.startsWith('[')) {
      const m = /^\[([^\]]*)\]\s*$/.exec(raw);
      if (!m || m[1]!.trim() === '') throw new IniSyntaxError(path, lineNo, `malformed group header ${JSON.stringify(raw.trim())}`);
      // oslo.config's _normalize_group_name: group names other than DEFAULT are case-insensitive.
      const name = m[1]!.trim() === 'DEFAULT' ? 'DEFAULT' : m[1]!.trim().toLowerCase();
      group = file.get(name) ?? new Map();
      file.set(name, group);
      return;
    }
    const m = /^([^=:]+?)\s*[=:]\s*(.*)$/.exec(raw);
    if (!m) throw new IniSyntaxError(path, lineNo, `expected "name = value", got ${JSON.stringify(raw.trim())}`);
    if (!group) throw new IniSyntaxError(path, lineNo, `option ${m[1]} comes before any [group] header`);
    const key = m[1]!.trim();
    const entry = group.get(key) ?? { values: [], path, line: lineNo };
    entry.values.push('');
    entry.line = lineNo;
    group.set(key, entry);
    open = { entry, parts: m[2]!.trim() === '' ? [] : [m[2]!.trim()] };
  });
  close();
  return file;
}

/** Later files override earlier ones key by key (oslo.config's --config-file order). */
export function mergeIni(files: IniFile[]): IniFile {
  const merged: IniFile = new Map();
  for (const file of files) {
    for (const [name, options] of file) {
      const group = merged.get(name) ?? new Map<string, IniValue>();
      merged.set(name, group);
      for (const [key, value] of options) {
        const before = group.get(key);
        // A MultiStrOpt collects its values over every file; the caller keeps the last for any other option.
        group.set(key, before ? { ...value, values: [...before.values, ...value.values] } : value);
      }
    }
  }
  return merged;
}

/**
 * Substitutes $name, ${name} and ${group.name} in a value: the same group
 * first, then [DEFAULT], as oslo.config does; `$$` is a literal $. A name that
 * is set nowhere is an error naming the option and its line.
 */
export function interpolate(file: IniFile, group: string, option: string, value: string, seen: string[] = []): string {
  const where = file.get(group)?.get(option);
  const fail = (detail: string): never => {
    throw new IniSyntaxError(where?.path ?? '(config)', where?.line ?? 0, `[${group}] ${option}: ${detail}`);
  };
  return value.replace(/\$(?:\$|\{([A-Za-z0-9_.-]+)\}|([A-Za-z_][A-Za-z0-9_]*))/g, (whole, braced?: string, bare?: string) => {
    if (whole === '$$') return '$';
    const ref = (braced ?? bare)!;
    const dot = ref.lastIndexOf('.');
    const [refGroup, refName] = dot > 0 ? [ref.slice(0, dot), ref.slice(dot + 1)] : [undefined, ref];
    const candidates = refGroup ? [refGroup] : [group, 'DEFAULT'];
    for (const g of candidates) {
      const found = file.get(g)?.get(refName);
      if (!found) continue;
      const key = `${g}.${refName}`;
      if (seen.includes(key)) fail(`$${ref} refers back to itself`);
      return interpolate(file, g, refName, found.values.at(-1)!, [...seen, key]);
    }
    return fail(`$${ref} is not set in any config file (write $$ for a literal $)`);
  });
}
