/**
 * `npm run test:interop` (scripts/test-interop.sh): drmas against the real external systems, installed by
 * scripts/python-env.sh. The default suite (jest.config.js) leaves test/interop out, so it never depends on Python.
 */
import base, { suiteMatch } from './jest.config.js';

export default {
  ...base,
  testMatch: suiteMatch('interop'),
  // Servers start, Python imports torch: a case may take minutes.
  testTimeout: 600000,
};
