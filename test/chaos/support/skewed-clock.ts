// Loaded into every chaos engine process (node --import, after tsx) so the
// suite can skew that process's wall clock, as a node whose NTP is off would
// be: Date.now() and `new Date()` read true time plus an offset; the monotonic
// clock (performance.now, timers) is untouched, as it is on such a node. The
// whole global Date is skewed, not only the product's Clock (src/time/clock.ts),
// because some reads bypass that Clock (the Lease's timestamps, Keystone's
// token cache, fencing proofs, the informers' watchdog) and a skewed node
// skews them all.
//
// The offset (integer ms) is read from the file MASAKARI_CHAOS_CLOCK_FILE at
// start and again on SIGUSR2; once applied it is written to `<file>.applied`,
// which is how the suite knows the process runs with it.
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.env.MASAKARI_CHAOS_CLOCK_FILE;

if (file) {
  const TrueDate = Date;
  let offsetMs = 0;
  const apply = () => {
    let text = '0';
    try {
      text = readFileSync(file, 'utf8').trim();
    } catch {
      // no file yet: true time
    }
    const n = Number(text);
    offsetMs = Number.isInteger(n) ? n : 0;
    writeFileSync(`${file}.applied`, String(offsetMs));
  };
  const now = () => TrueDate.now() + offsetMs;
  globalThis.Date = new Proxy(TrueDate, {
    construct: (target, args, newTarget) => Reflect.construct(target, args.length ? args : [now()], newTarget),
    // Date() called as a function returns the current time as a string
    apply: () => new TrueDate(now()).toString(),
    get: (target, key, receiver) => (key === 'now' ? now : Reflect.get(target, key, receiver)),
  });
  apply();
  process.on('SIGUSR2', apply);
}
