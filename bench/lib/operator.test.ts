// The benchmarked processes start with the image's node flags (Dockerfile ENTRYPOINT).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { imageNodeFlags } from './operator.ts';

test("the image's ENTRYPOINT flags: --optimize-for-size, which NODE_OPTIONS refuses", () => {
  assert.equal(imageNodeFlags(), ['--optimize-for-size']);
});

test('flags are the words between node and the script', () => {
  const dockerfile = 'FROM x\nENTRYPOINT ["node", "--a", "--b=1", "dist/src/main.js"]\nCMD ["run"]\n';
  assert.equal(imageNodeFlags(dockerfile), ['--a', '--b=1']);
});

test('an ENTRYPOINT of another shape is an error, not a process started without its flags', () => {
  assert.throws(() => imageNodeFlags('ENTRYPOINT ["/bin/sh", "-c", "node dist/src/main.js"]\n'), /expected ENTRYPOINT/);
  assert.throws(() => imageNodeFlags('FROM x\n'), /got none/);
});

test.run();
