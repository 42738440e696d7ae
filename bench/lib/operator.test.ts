// The benchmarks run the operator with the image's allocator settings, read
// from the Dockerfile, so their resident sets are a pod's.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { imageAllocatorEnv } from './operator.ts';

test("the image's glibc allocator settings are read from the Dockerfile's ENV", () => {
  assert.equal(imageAllocatorEnv(), { MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '131072' });
});

test('only MALLOC_*_ assignments with a number count, wherever the ENV line is continued', () => {
  const dockerfile = [
    'ENV NODE_ENV=production \\',
    '    # MALLOC_ARENA_MAX_=2 is only a comment',
    '    MALLOC_TOP_PAD_=4096 \\',
    '    NODE_OPTIONS="--max-semi-space-size=16"',
    'RUN echo MALLOC_X_=1',
  ].join('\n');
  assert.equal(imageAllocatorEnv(dockerfile), { MALLOC_TOP_PAD_: '4096' });
});

test.run();
