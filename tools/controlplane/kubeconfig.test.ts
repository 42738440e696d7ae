import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KubeConfig } from '@kubernetes/client-node';
import { KUBECONFIG_CONTEXT, renderKubeconfig } from './kubeconfig.ts';

test('the kubeconfig loads in @kubernetes/client-node with server, CA data and token', () => {
  const kc = new KubeConfig();
  kc.loadFromString(renderKubeconfig('https://127.0.0.1:6443', 'Q0FEQVRB', 'secret-token'));
  assert.is(kc.getCurrentContext(), KUBECONFIG_CONTEXT);
  const cluster = kc.getCurrentCluster();
  assert.is(cluster?.server, 'https://127.0.0.1:6443');
  assert.is(cluster?.caData, 'Q0FEQVRB');
  assert.not.ok(cluster?.skipTLSVerify, 'TLS is verified');
  assert.is(kc.getCurrentUser()?.token, 'secret-token');
});

test.run();
