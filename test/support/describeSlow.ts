import { describe, test } from '@jest/globals';

/** `describe` for checks that need more than a few seconds: they run only with DRMAS_SLOW_TESTS=1 (`npm run test:slow`). */
export const describeSlow = process.env.DRMAS_SLOW_TESTS === '1' ? describe : describe.skip;

/** `test` for one slow case in a file whose other cases stay in the default run. */
export const testSlow = process.env.DRMAS_SLOW_TESTS === '1' ? test : test.skip;
