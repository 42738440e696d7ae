// FOR UNIT TESTS ONLY: what an unproven fencing verdict says is missing.
import * as assert from 'uvu/assert';
import type { FencingVerdict } from '../proof.ts';

/** The verdict's `missing` text; a verdict that proves fencing fails the test, naming its proof. */
export function missingProof(v: FencingVerdict): string {
  if (v.proven) assert.unreachable(`proven by ${v.proof.source}`);
  return v.proven ? '' : v.missing;
}
