import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { histogramDelta, histogramTotals, parseLabels, sampleSums, sampleValue } from './prometheus.ts';

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

test('histogramTotals reads count and sum per series; histogramDelta keeps what gained samples', () => {
  const h = (n: number, s: number) => `# TYPE req_seconds histogram
req_seconds_bucket{method="GET",le="0.01"} ${n}
req_seconds_sum{method="GET"} ${s}
req_seconds_count{method="GET"} ${n}
req_seconds_sum{method="POST"} 0.5
req_seconds_count{method="POST"} 2
req_seconds_other 9
`;
  const before = histogramTotals(h(3, 0.03), 'req_seconds');
  assert.equal(Object.fromEntries(before), {
    'method=GET': { count: 3, sum: 0.03 },
    'method=POST': { count: 2, sum: 0.5 },
  });
  const delta = histogramDelta(before, histogramTotals(h(5, 0.07), 'req_seconds'));
  assert.equal([...delta.keys()], ['method=GET']);
  assert.is(delta.get('method=GET')!.count, 2);
  assert.ok(Math.abs(delta.get('method=GET')!.sum - 0.04) < 1e-9);
});

test('sampleSums adds up the samples of one metric by the values of the labels asked for', () => {
  const text = `# TYPE apiserver_request_total counter
apiserver_request_total{code="200",resource="hahosts",scope="namespace",verb="LIST"} 3
apiserver_request_total{code="410",resource="hahosts",scope="namespace",verb="LIST"} 1
apiserver_request_total{code="201",resource="configmaps",scope="resource",verb="POST"} 7
apiserver_request_total_other{resource="hahosts",verb="LIST"} 99
`;
  assert.equal(Object.fromEntries(sampleSums(text, 'apiserver_request_total', ['verb', 'resource'])), {
    'LIST hahosts': 4,
    'POST configmaps': 7,
  });
});

test.run();
