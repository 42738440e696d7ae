// The flags etcd and kube-apiserver run with. Kept apart from the start-up
// sequence (controlplane.ts), which spawns, waits, restarts and restores:
// these are the only place that says how the throwaway control plane differs
// from a production one (loopback only, no fsync, RBAC with a static token,
// no ServiceAccount admission).
import type { CredentialFiles } from './credentials.ts';

export interface EtcdMember {
  name: string;
  dataDir: string;
  clientPort: number;
  peerPort: number;
  /** etcd's --initial-cluster: name=peer URL of every member. */
  initialCluster: string;
  /** Unique per control plane, so members of another one never join. */
  clusterToken: string;
  /** --unsafe-no-fsync when this etcd has it (start.ts etcdSupportsNoFsync). */
  noFsync: boolean;
}

export function etcdArgs(m: EtcdMember): string[] {
  return [
    `--name=${m.name}`,
    `--data-dir=${m.dataDir}`,
    `--listen-client-urls=http://127.0.0.1:${m.clientPort}`,
    `--advertise-client-urls=http://127.0.0.1:${m.clientPort}`,
    `--listen-peer-urls=http://127.0.0.1:${m.peerPort}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${m.peerPort}`,
    `--initial-cluster=${m.initialCluster}`,
    `--initial-cluster-token=${m.clusterToken}`,
    '--log-level=warn',
    ...(m.noFsync ? ['--unsafe-no-fsync=true'] : []),
  ];
}

export interface ApiServerFlags {
  /** Comma-separated etcd client URLs. */
  etcdServers: string;
  pkiDir: string;
  files: CredentialFiles;
  port: number;
  /** The port clients use (the balancer's in shape 'ha'): the service-account issuer names it. */
  issuerPort: number;
  profiling: boolean;
  featureGates: string | undefined;
}

export function apiServerArgs(f: ApiServerFlags): string[] {
  return [
    `--etcd-servers=${f.etcdServers}`,
    `--cert-dir=${f.pkiDir}`,
    `--tls-cert-file=${f.files.servingCert}`,
    `--tls-private-key-file=${f.files.servingKey}`,
    `--secure-port=${f.port}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    '--service-cluster-ip-range=10.0.0.0/24',
    '--allow-privileged=true',
    '--authorization-mode=RBAC',
    `--token-auth-file=${f.files.tokens}`,
    '--disable-admission-plugins=ServiceAccount',
    `--service-account-issuer=https://127.0.0.1:${f.issuerPort}/`,
    `--service-account-key-file=${f.files.saPub}`,
    `--service-account-signing-key-file=${f.files.saKey}`,
    `--profiling=${f.profiling}`,
    ...(f.featureGates ? [`--feature-gates=${f.featureGates}`] : []),
    '--v=1',
  ];
}
