import { describe } from '@jest/globals';
import { pythonEnv } from './pythonEnv.js';

/** The title a skipped interop suite carries; test/interop/summary.mjs reads it back from jest's JSON report. */
export const SKIPPED_TITLE = /^(.+) \[skipped: (.+)\]$/;

/**
 * Why the run leaves the environment `envName` out, when `DRMAS_INTEROP_SKIP` names it (a comma-separated list of
 * environment names; scripts/test-interop.sh does not make them), with `DRMAS_INTEROP_SKIP_REASON` as the reason.
 */
function leftOut(envName: string): string | undefined {
  const names = (process.env.DRMAS_INTEROP_SKIP ?? '').split(',').map((name) => name.trim());
  if (!names.includes(envName)) return undefined;
  return process.env.DRMAS_INTEROP_SKIP_REASON ?? `left out by DRMAS_INTEROP_SKIP`;
}

/**
 * A suite that runs `system` (a real external system installed in the Python environment `envName`,
 * scripts/python/<envName>.txt) against drmas, or skips with the reason in its title when the environment is left out
 * (`DRMAS_INTEROP_SKIP`) or absent, or `unavailable` names another reason (a binary the package did not bring, a platform it does not run on).
 */
export function describeInterop(
  system: string,
  envName: string,
  suite: (python: string) => void,
  unavailable?: (python: string) => string | undefined,
): void {
  const env = pythonEnv(envName);
  const reason = leftOut(envName) ?? ('skip' in env ? env.skip : unavailable?.(env.python));
  if (reason === undefined && 'python' in env) {
    describe(system, () => suite(env.python));
    return;
  }
  console.log(`interop: ${system} skipped: ${reason}`);
  // The suite is still declared (its tests counted as skipped, none of its hooks run).
  describe.skip(`${system} [skipped: ${reason}]`, () => suite(''));
}
