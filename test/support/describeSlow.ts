import { describe } from '@jest/globals';

/** `describe` for checks that need more than a few seconds: they run only with DRMAS_SLOW_TESTS=1 (`npm run test:slow`). */
export const describeSlow = process.env.DRMAS_SLOW_TESTS === '1' ? describe : describe.skip;
