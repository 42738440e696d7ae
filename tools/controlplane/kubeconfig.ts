// The kubeconfig handed to kubectl and @kubernetes/client-node: one cluster
// (server + CA data, so TLS is verified), one token user, one context.
import { dump } from 'js-yaml';

export const KUBECONFIG_CONTEXT = 'masakari-envtest';

export function renderKubeconfig(server: string, caData: string, token: string): string {
  return dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: KUBECONFIG_CONTEXT, cluster: { server, 'certificate-authority-data': caData } }],
    users: [{ name: 'admin', user: { token } }],
    contexts: [
      { name: KUBECONFIG_CONTEXT, context: { cluster: KUBECONFIG_CONTEXT, user: 'admin', namespace: 'default' } },
    ],
    'current-context': KUBECONFIG_CONTEXT,
    preferences: {},
  });
}
