// FOR UNIT TESTS ONLY: the one fake ipmitool, a shell script in a temporary
// directory that keeps a host's chassis power in a file, records its argv and
// the IPMI_PASSWORD it was given, and fails as its mode says (refused,
// unreachable, hang, garbage), the way ipmitool's lanplus interface fails.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SCRIPT = `#!/bin/sh
dir=$(dirname "$0")
echo "$*" >> "$dir/argv"
echo "$IPMI_PASSWORD" >> "$dir/env"
mode=$(cat "$dir/mode" 2>/dev/null)
case "$mode" in
  refused) echo "Error: Unable to establish IPMI v2 / RMCP+ session" >&2; echo "RAKP 2 message indicates an error : unauthorized name" >&2; exit 1 ;;
  unreachable) echo "Error: Unable to establish IPMI v2 / RMCP+ session" >&2; exit 1 ;;
  hang) exec sleep 30 ;;
  garbage) echo "Chassis Power is lukewarm"; exit 0 ;;
esac
case "$*" in
  *"chassis power off") echo off > "$dir/power"; echo "Chassis Power Control: Down/Off" ;;
  *"chassis power status") echo "Chassis Power is $(cat "$dir/power" 2>/dev/null || echo on)" ;;
  *) echo "unknown command" >&2; exit 1 ;;
esac
`;

export type FakeIpmiMode = 'ok' | 'refused' | 'unreachable' | 'hang' | 'garbage';

export interface FakeIpmitool {
  /** The directory holding the script (put it first on PATH) and its state files. */
  dir: string;
  /** The script's path (the drivers' `ipmitool` option). */
  bin: string;
  mode(m: FakeIpmiMode): void;
  power(): 'on' | 'off';
  /** Each run's arguments, one line per run. */
  argv(): string[];
  /** IPMI_PASSWORD of each run. */
  passwords(): string[];
  /** Back to power on, mode ok, nothing recorded. */
  reset(): void;
  remove(): void;
}

export function installFakeIpmitool(): FakeIpmitool {
  const dir = mkdtempSync(join(tmpdir(), 'fake-ipmitool-'));
  const bin = join(dir, 'ipmitool');
  writeFileSync(bin, SCRIPT);
  chmodSync(bin, 0o755);
  const lines = (f: string) =>
    existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8').trim().split('\n').filter(Boolean) : [];
  return {
    dir,
    bin,
    mode: (m) => writeFileSync(join(dir, 'mode'), m === 'ok' ? '' : m),
    power: () => (lines('power')[0] === 'off' ? 'off' : 'on'),
    argv: () => lines('argv'),
    passwords: () => lines('env'),
    reset() {
      for (const f of ['argv', 'env', 'mode', 'power']) rmSync(join(dir, f), { force: true });
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
