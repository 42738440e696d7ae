// The IPMI driver of the Bmc port: ipmitool over IPMI v2.0 (lanplus), as
// Debian packages it: `ipmitool -I lanplus -H <host> -p <port> -U <user> -E
// chassis power off|status`. The password goes to ipmitool through its
// environment (-E reads IPMI_PASSWORD), never on the command line, where any
// local user could read it from the process table. Each call is one process
// with a deadline (execFile's timeout kills it). ipmitool says what went
// wrong only in its stderr text, which is classified here: a rejected login
// is refused, no session at all unreachable, the deadline timeout, anything
// else (and any status we cannot parse) error.

import { execFile } from 'node:child_process';
import { BmcError } from './bmc.ts';
import type { Bmc, BmcFailureKind, PowerState } from './bmc.ts';

export interface IpmiOptions {
  /** host, host:port or [v6]:port; default port 623. */
  address: string;
  username: string;
  password: string;
  /** Deadline of each ipmitool run. */
  timeoutMs: number;
  /** The ipmitool binary; default `ipmitool` from PATH. */
  ipmitool?: string;
}

export const IPMI_DEFAULT_PORT = 623;

/** host and port of an IPMI address; throws BmcError('error') for one that does not parse. */
export function parseIpmiAddress(address: string): { host: string; port: number } {
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(address);
  const plain = /^([^:[\]]+)(?::(\d+))?$/.exec(address);
  const m = v6 ?? plain;
  const port = m?.[2] === undefined ? IPMI_DEFAULT_PORT : Number(m[2]);
  if (!m?.[1] || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new BmcError('error', `ipmi: address ${JSON.stringify(address)} is not host, host:port or [v6]:port`);
  }
  return { host: m[1], port };
}

/** What ipmitool's stderr says went wrong. */
export function classifyIpmiFailure(stderr: string): BmcFailureKind {
  if (/unauthorized|RAKP 2 HMAC is invalid|RAKP 4|invalid user ?name|password|Insufficient privilege/i.test(stderr)) {
    return 'refused';
  }
  if (
    /Unable to establish|Get Auth Capabilities|Get Channel Cipher Suites|No response|timeout|Address lookup/i.test(
      stderr,
    )
  ) {
    return 'unreachable';
  }
  return 'error';
}

/** `chassis power status` output: "Chassis Power is on|off". */
export function parseChassisPower(stdout: string): PowerState | undefined {
  const m = /Chassis Power is (on|off)\b/i.exec(stdout);
  if (!m?.[1]) return undefined;
  return m[1].toLowerCase() === 'off' ? 'Off' : 'On';
}

export function ipmiBmc(o: IpmiOptions): Bmc {
  const { host, port } = parseIpmiAddress(o.address);
  const describe = `ipmi ${host}:${port}`;
  const bin = o.ipmitool ?? 'ipmitool';

  function run(args: string[], what: string, signal: AbortSignal | undefined): Promise<string> {
    const argv = ['-I', 'lanplus', '-H', host, '-p', String(port), '-U', o.username, '-E', ...args];
    return new Promise((resolve, reject) => {
      execFile(
        bin,
        argv,
        {
          timeout: o.timeoutMs,
          killSignal: 'SIGKILL',
          env: { ...process.env, IPMI_PASSWORD: o.password },
          ...(signal ? { signal } : {}),
          maxBuffer: 64 * 1024,
        },
        (err, stdout, stderr) => {
          if (!err) return resolve(stdout);
          if (signal?.aborted) return reject(signal.reason);
          const e = err as NodeJS.ErrnoException & { killed?: boolean };
          if (e.killed) {
            return reject(new BmcError('timeout', `${describe}: ${what} got no answer within ${o.timeoutMs / 1000}s`));
          }
          if (e.code === 'ENOENT') {
            return reject(new BmcError('error', `${describe}: ${bin} is not installed (Debian package ipmitool)`));
          }
          const said = stderr.trim().split('\n').slice(-3).join('; ') || e.message;
          reject(new BmcError(classifyIpmiFailure(stderr), `${describe}: ${what} failed: ${said}`));
        },
      );
    });
  }

  return {
    describe,
    driver: 'ipmi',
    async powerOff(signal?: AbortSignal): Promise<void> {
      await run(['chassis', 'power', 'off'], 'chassis power off', signal);
    },
    async powerState(signal?: AbortSignal): Promise<PowerState> {
      const out = await run(['chassis', 'power', 'status'], 'chassis power status', signal);
      const state = parseChassisPower(out);
      if (!state) {
        throw new BmcError(
          'error',
          `${describe}: chassis power status answered ${JSON.stringify(out.trim().slice(0, 200))}`,
        );
      }
      return state;
    },
  };
}
