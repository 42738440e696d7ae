// Starts the single-node test cluster (tools/controlplane/cluster.ts) with the
// operator image loaded, prints how to reach it, and stops it on Ctrl-C.
//   sudo node --import tsx scripts/cluster.ts [IMAGE_ARCHIVE...]
import { startCluster } from '../tools/controlplane/cluster.ts';

const cluster = await startCluster({ images: process.argv.slice(2) });
process.stdout.write(`export KUBECONFIG=${cluster.kubeconfigPath}\n`);
const stop = (): void => {
  void cluster.stop().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
setInterval(() => {}, 1 << 30);
