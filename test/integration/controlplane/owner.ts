// A control-plane owner for the lifecycle tests, run as a child process:
//   node --import tsx owner.ts hang   starts a control plane, prints its facts as one JSON line, waits
//   node --import tsx owner.ts exit   the same, then exits without calling stop()
import { startControlPlane } from '../../../tools/controlplane/index.ts';

const mode = process.argv[2];
const cp = await startControlPlane({ crdDir: null, log: () => undefined });
process.stdout.write(`${JSON.stringify({ id: cp.id, dir: cp.dir, server: cp.server, pids: cp.pids })}\n`);
if (mode === 'hang') setInterval(() => undefined, 1 << 30);
