// The single-node cluster's network and the configuration files its node
// components read: containerd's config.toml, the bridge CNI network, the
// KubeletConfiguration and the KubeProxyConfiguration.

import { writeFileSync } from 'node:fs';
import { dump } from 'js-yaml';

export const NODE_IP = '10.213.0.1';
export const NODE_NAME = 'masakari-node';
export const POD_CIDR = '10.214.0.0/24';
export const SERVICE_CIDR = '10.215.0.0/24';
/** The `kubernetes` Service: the first address of SERVICE_CIDR. */
export const KUBERNETES_SERVICE_IP = '10.215.0.1';
export const APISERVER_PORT = 6443;
/** The pod bridge and the CNI network's name (its iptables rules carry it). */
export const BRIDGE = 'mko-pods';
export const CNI_NETWORK = 'masakari-pods';

export interface NodeConfigInputs {
  /** A path inside the cluster's run dir. */
  p: (...parts: string[]) => string;
  pauseImage: string;
  containerdSock: string;
  files: { ca: string; kubeletCert: string; kubeletKey: string };
  kubeProxyKubeconfig: string;
}

/** Writes containerd.toml, cni/10-masakari.conflist, kubelet.yaml and kube-proxy.yaml into the run dir. */
export function writeNodeConfigs({
  p,
  pauseImage,
  containerdSock,
  files,
  kubeProxyKubeconfig,
}: NodeConfigInputs): void {
  writeFileSync(
    p('containerd.toml'),
    [
      'version = 2',
      `root = "${p('containerd')}"`,
      `state = "${p('run', 'containerd-state')}"`,
      '[grpc]',
      `  address = "${containerdSock}"`,
      '[plugins."io.containerd.grpc.v1.cri"]',
      `  sandbox_image = "${pauseImage}"`,
      // This machine denies lowering oom_score_adj (no CAP_SYS_RESOURCE for
      // it), so runc could not give the sandbox kubelet's -998; keep every
      // container at or above containerd's own score instead.
      '  restrict_oom_score_adj = true',
      '  [plugins."io.containerd.grpc.v1.cri".containerd]',
      '    snapshotter = "overlayfs"',
      '    default_runtime_name = "runc"',
      '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
      '      runtime_type = "io.containerd.runc.v2"',
      '  [plugins."io.containerd.grpc.v1.cri".cni]',
      '    bin_dir = "/usr/lib/cni"',
      `    conf_dir = "${p('cni')}"`,
      '',
    ].join('\n'),
  );
  writeFileSync(
    p('cni', '10-masakari.conflist'),
    JSON.stringify({
      cniVersion: '0.4.0',
      name: CNI_NETWORK,
      plugins: [
        {
          type: 'bridge',
          bridge: BRIDGE,
          isGateway: true,
          ipMasq: true,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: POD_CIDR }]],
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: p('run', 'cni-ipam'),
          },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
        { type: 'loopback' },
      ],
    }),
  );
  writeFileSync(
    p('kubelet.yaml'),
    dump({
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      address: NODE_IP,
      port: 10250,
      readOnlyPort: 0,
      healthzBindAddress: '127.0.0.1',
      healthzPort: 10248,
      tlsCertFile: files.kubeletCert,
      tlsPrivateKeyFile: files.kubeletKey,
      authentication: {
        anonymous: { enabled: false },
        webhook: { enabled: true },
        x509: { clientCAFile: files.ca },
      },
      authorization: { mode: 'Webhook' },
      containerRuntimeEndpoint: `unix://${containerdSock}`,
      cgroupDriver: 'cgroupfs',
      // The machine runs cgroup v1; kubelet 1.34 refuses it unless told not to.
      failCgroupV1: false,
      failSwapOn: false,
      // A shared test machine: no evictions or image GC triggered by other
      // tenants' disk and memory use.
      evictionHard: { 'memory.available': '0%', 'nodefs.available': '0%', 'imagefs.available': '0%' },
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      cgroupsPerQOS: false,
      enforceNodeAllocatable: [],
      resolvConf: '/etc/resolv.conf',
      serializeImagePulls: false,
      registerNode: true,
      nodeStatusUpdateFrequency: '5s',
      syncFrequency: '10s',
      fileCheckFrequency: '10s',
      volumeStatsAggPeriod: '0s',
      maxPods: 50,
    }),
  );
  writeFileSync(
    p('kube-proxy.yaml'),
    dump({
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      mode: 'iptables',
      clusterCIDR: POD_CIDR,
      clientConnection: { kubeconfig: kubeProxyKubeconfig },
      hostnameOverride: NODE_NAME,
      bindAddress: NODE_IP,
      healthzBindAddress: '127.0.0.1:10256',
      metricsBindAddress: '127.0.0.1:10249',
      nodePortAddresses: [`${NODE_IP}/32`],
      // Leave the host's conntrack table sizes and timeouts alone.
      conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
      iptables: { syncPeriod: '10s', minSyncPeriod: '1s' },
    }),
  );
}
