// What a caller of startControlPlane (controlplane.ts) passes and gets back:
// the options of the throwaway control plane and the handle to it. Apart
// from the start-up sequence so that the tests, the test runner and
// `make run` read the contract without the process management behind it.
import type { HaControls } from './ha.ts';

export type ControlPlaneShape = 'single' | 'ha';
export interface ControlPlaneOptions {
  /** 'single' (default): one etcd, one kube-apiserver. 'ha': three etcd members, two kube-apiservers, a balancer. */
  shape?: ControlPlaneShape;
  /** Dir with etcd and kube-apiserver; default: ensureBinaries(). */
  binDir?: string;
  /** CRDs to install; default <repo>/crds; null installs none. */
  crdDir?: string | null;
  /** ValidatingAdmissionPolicies to install after the CRDs; default <repo>/config/policy when CRDs are installed; null installs none. */
  policyDir?: string | null;
  /** Per component; default MASAKARI_CONTROLPLANE_START_TIMEOUT_MS or 90 s (2 slow cores). */
  startTimeoutMs?: number;
  /** SIGTERM grace per process before SIGKILL; default 10 s. */
  stopTimeoutMs?: number;
  /** Keep the temp dir (logs, etcd data) after stop(); also MASAKARI_CONTROLPLANE_KEEP=1. */
  keepDir?: boolean;
  /** Serve kube-apiserver's /debug/pprof (bench/storm --apiserver-profile); default off, as in production. */
  profiling?: boolean;
  /** kube-apiserver's --feature-gates, e.g. 'DetectCacheInconsistency=false' (bench/scale --apiserver-feature-gates); default none. */
  apiserverFeatureGates?: string;
  log?: (line: string) => void;
}

export interface ControlPlane {
  shape: ControlPlaneShape;
  /** kubeconfig (YAML) with server, CA data and the admin token; removed by stop() with the temp dir. */
  kubeconfigPath: string;
  /** https://127.0.0.1:<port>; in shape 'ha' the balancer's. */
  server: string;
  /** Bearer token of user "admin" in group system:masters. */
  token: string;
  /** base64 of the CA's PEM, as kubeconfig's certificate-authority-data and client-node's caData. */
  caData: string;
  /** The CA's PEM. */
  caPem: string;
  /** The first member's client URL. */
  etcdUrl: string;
  /** Temp dir: pki/, etcd/, *.log, kubeconfig. */
  dir: string;
  id: string;
  /** The current processes of the first etcd member and API server (apiserver changes with restartApiServer). */
  pids: { etcd: number; apiserver: number; watchdog: number };
  stop(): Promise<void>;
  /**
   * Stops kube-apiserver (SIGTERM, then SIGKILL after stopTimeoutMs) and starts it again on the same
   * port with the same etcd and credentials; resolves once it is ready. For fault-injection tests.
   * In shape 'ha', the first API server.
   */
  restartApiServer(): Promise<void>;
  /** Fault controls of shape 'ha'; undefined in shape 'single'. */
  ha?: HaControls;
}
