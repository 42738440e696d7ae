import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseLabels, sampleValue } from './prometheus.ts';

const ETCD = `# HELP etcd_mvcc_db_total_size_in_bytes Total size of the underlying database physically allocated in bytes.
# TYPE etcd_mvcc_db_total_size_in_bytes gauge
etcd_mvcc_db_total_size_in_bytes 2.4576e+06
# HELP etcd_mvcc_db_total_size_in_use_in_bytes Total size of the underlying database logically in use in bytes.
# TYPE etcd_mvcc_db_total_size_in_use_in_bytes gauge
etcd_mvcc_db_total_size_in_use_in_bytes 1.253376e+06
etcd_server_quota_backend_bytes 2.147483648e+09
http_requests_total{method="post",code="200"} 1027 1395066363000
http_requests_total{method="post",code="400"}    3 1395066363000
msg_total{text="a \\"quoted\\", comma"} 7
`;

test('sampleValue reads a gauge in exponent notation and does not confuse longer names', () => {
  assert.is(sampleValue(ETCD, 'etcd_mvcc_db_total_size_in_bytes'), 2_457_600);
  assert.is(sampleValue(ETCD, 'etcd_mvcc_db_total_size_in_use_in_bytes'), 1_253_376);
  assert.is(sampleValue(ETCD, 'etcd_mvcc_db_total_size'), undefined);
  assert.is(sampleValue(ETCD, 'etcd_server_quota_backend_bytes'), 2_147_483_648);
});

test('sampleValue picks the sample whose labels match, ignoring the timestamp', () => {
  assert.is(sampleValue(ETCD, 'http_requests_total', { code: '400' }), 3);
  assert.is(sampleValue(ETCD, 'http_requests_total', { code: '200', method: 'post' }), 1027);
  assert.is(sampleValue(ETCD, 'http_requests_total', { code: '500' }), undefined);
  assert.is(sampleValue(ETCD, 'msg_total', { text: 'a "quoted", comma' }), 7);
});

test('parseLabels resolves escapes and tolerates a trailing comma', () => {
  assert.equal(parseLabels('a="1",b="x\\ny",'), { a: '1', b: 'x\ny' });
  assert.equal(parseLabels(''), {});
});

test.run();
