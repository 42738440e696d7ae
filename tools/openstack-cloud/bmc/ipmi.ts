// The IPMI BMCs: one ipmi_sim (Debian's OpenIPMI 2.0.33) per compute host,
// IPMI 2.0 over LAN (lanplus) on a loopback UDP port, one admin user. Its
// chassis power is not simulated inside ipmi_sim: lan.conf's chassis_control
// names a program (chassis.sh, below) that ipmi_sim runs for every "get
// power" and "set power", and that asks the power link (power-link.ts). So a
// `chassis power off` kills the host's nova-compute before ipmi_sim answers,
// and `chassis power status` reads what the link holds.
//
// The host's UDP port is the relay of ipmi-front.ts (which answers Get
// Channel Cipher Suites for ipmi_sim); ipmi_sim itself listens on a second,
// internal port. Stopping the BMC stops both, so the port goes silent.
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitUntil } from '../../controlplane/http.ts';
import { logTail, terminate, type ManagedProcess } from '../../controlplane/processes.ts';
import { startIpmiFront, type IpmiFront } from './ipmi-front.ts';

const run = promisify(execFile);

/**
 * ipmi_sim's chassis control program: `chassis.sh <link port> <host> get|set|check [parm [value]]...`
 * (OpenIPMI lanserv/ipmi_sim_chassiscontrol is the reference of this interface). Plain bash, HTTP/1.0
 * over /dev/tcp: it runs for every power request, so it must start fast and need nothing installed.
 */
const CHASSIS_SCRIPT = `#!/bin/bash
port=$1 host=$2 op=$3
shift 3
req() {
  exec 3<>"/dev/tcp/127.0.0.1/$port" || { echo "power link unreachable"; exit 1; }
  printf '%s %s HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\nContent-Length: 0\\r\\n\\r\\n' "$1" "$2" >&3
  reply=$(cat <&3)
  exec 3>&-
  case $reply in "HTTP/1."?" 2"*) ;; *) echo "power link: \${reply%%$'\\r'*}"; exit 1 ;; esac
  body=\${reply##*$'\\r\\n\\r\\n'}
}
case $op in
  get)
    for parm in "$@"; do
      case $parm in
        power) req GET "/ipmi/$host/power"; echo "power:$body" ;;
        boot) echo "boot:default" ;;
        *) echo "unsupported parameter $parm"; exit 1 ;;
      esac
    done ;;
  set)
    while [ $# -ge 2 ]; do
      case $1 in power) req POST "/ipmi/$host/power/$2" ;; esac
      shift 2
    done ;;
  check) ;;
  *) echo "unknown operation $op"; exit 1 ;;
esac
`;

export interface IpmiBmcOptions {
  dir: string;
  ipmiSim: string;
  host: string;
  port: number;
  backendPort: number;
  linkPort: number;
  username: string;
  password: string;
  launch(name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv): ManagedProcess;
  startTimeoutMs: number;
}

export interface IpmiBmc {
  host: string;
  /** host:port, as HaHost spec.fencing.address takes it. */
  address: string;
  running(): boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** ipmitool -I lanplus chassis power <on|off|status> as the BMC's own user; its output. */
  chassis(action: 'on' | 'off' | 'status'): Promise<string>;
}

export function prepareIpmiBmc(o: IpmiBmcOptions): IpmiBmc {
  const base = join(o.dir, 'bmc', `ipmi-${o.host}`);
  mkdirSync(join(base, 'state'), { recursive: true });
  const script = join(o.dir, 'bmc', 'chassis.sh');
  writeFileSync(script, CHASSIS_SCRIPT);
  chmodSync(script, 0o755);
  const lanConf = join(base, 'lan.conf');
  writeFileSync(
    lanConf,
    [
      `name "${o.host}"`,
      'set_working_mc 0x20',
      '  startlan 1',
      `    addr 127.0.0.1 ${o.backendPort}`,
      '    priv_limit admin',
      '    allowed_auths_callback md5',
      '    allowed_auths_user md5',
      '    allowed_auths_operator md5',
      '    allowed_auths_admin md5',
      // RMCP+ (lanplus) needs a GUID on the channel (lanserv_ipmi.c)
      '    guid a123456789abcdefa123456789abcdef',
      '  endlan',
      `  chassis_control "${script} ${o.linkPort} ${o.host}"`,
      `  user 2 true "${o.username}" "${o.password}" admin 10 md5`,
      '',
    ].join('\n'),
  );
  const emu = join(base, 'sim.emu');
  writeFileSync(
    emu,
    [
      'mc_setbmc 0x20',
      'mc_add 0x20 0 no-device-sdrs 0x23 0x09 0x08 0x9f 0x1291 0xf02 persist_sdr',
      'sel_enable 0x20 1000 0x0a',
      'mc_enable 0x20',
      '',
    ].join('\n'),
  );
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' };
  let proc: ManagedProcess | undefined;
  let front: IpmiFront | undefined;
  const running = () => proc !== undefined && !proc.exit && front !== undefined;
  const chassis = async (action: 'on' | 'off' | 'status'): Promise<string> => {
    const args = ['-I', 'lanplus', '-H', '127.0.0.1', '-p', String(o.port), '-U', o.username, '-E'];
    const r = await run('ipmitool', [...args, '-N', '2', '-R', '2', 'chassis', 'power', action], {
      timeout: 30_000,
      env: { ...env, IPMI_PASSWORD: o.password },
    });
    return r.stdout.trim();
  };
  return {
    host: o.host,
    address: `127.0.0.1:${o.port}`,
    running,
    chassis,
    async start() {
      if (running()) return;
      if (!proc || proc.exit) {
        // -n: no console on stdin; the config paths name dir, as the watchdog requires
        const p = o.launch(
          `bmc-ipmi-${o.host}`,
          o.ipmiSim,
          ['-n', '-c', lanConf, '-f', emu, '-s', join(base, 'state')],
          env,
        );
        proc = p;
      }
      front ??= await startIpmiFront(o.port, o.backendPort);
      const p = proc;
      await waitUntil(
        'ipmi_sim answering',
        async () => ((await chassis('status')).includes('Chassis Power') ? true : undefined),
        {
          timeoutMs: o.startTimeoutMs,
          intervalMs: 300,
          abort: () =>
            p.exit ? new Error(`ipmi_sim exited; last lines of ${p.logPath}:\n${logTail(p.logPath)}`) : undefined,
        },
      );
    },
    async stop() {
      await front?.close();
      front = undefined;
      if (proc) await terminate(proc, 10_000);
    },
  };
}
