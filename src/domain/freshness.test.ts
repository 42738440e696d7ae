import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GENERATED_TIME_FUTURE_TOLERANCE_S, staleness } from './freshness.ts';

const NOW = Date.UTC(2026, 11, 4, 12, 0, 0);
const DAY_S = 86_400;
const at = (generatedTime: string) => staleness({ uuid: 'u', generatedTime }, NOW, DAY_S);

test('older than notifications_expired_interval is expired, with the time and the bound in the reason', () => {
  assert.equal(at('2026-11-03T12:00:00'), {
    kind: 'expired',
    reason:
      'Notification u is expired: its generated_time 2026-11-03T12:00:00 is older than ' +
      'notifications_expired_interval (86400 s); it is not run.',
  });
  assert.is(at('2026-12-03T11:59:59')?.kind, 'expired', 'one second past the bound');
  assert.is(at('2026-12-03T12:00:00'), undefined, 'exactly the bound: not older');
});

test('a generated_time in the future is tolerated up to the clock-skew bound, refused beyond it', () => {
  assert.is(GENERATED_TIME_FUTURE_TOLERANCE_S, 900);
  assert.is(at('2026-12-04T12:15:00'), undefined);
  assert.equal(at('2026-12-04T12:15:01'), {
    kind: 'future',
    reason:
      'Notification u is refused: its generated_time 2026-12-04T12:15:01 is 901 s in the future, more than ' +
      'the clock-skew tolerance (900 s); it is not run.',
  });
  assert.is(at('2026-12-04T13:05:00+01:00'), undefined, 'a zone is honoured');
});

test('an unparsable generated_time is left to the rules that handle it', () => {
  assert.is(at('yesterday'), undefined);
});

test.run();
