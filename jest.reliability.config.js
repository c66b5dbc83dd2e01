/**
 * `npm run test:reliability`: the suite in test/reliability (bad input, damaged checkpoints, SIGKILL and resume,
 * parser fuzzing, sandbox and retriever abuse), slow parts included; `.ci/run` runs it as a block of its own. The
 * default suite (jest.config.js) leaves it out: whole runs of the CLI, it would take a minute of `npm test` even in
 * its quick form.
 */
import base, { suiteMatch } from './jest.config.js';

export default {
  ...base,
  testMatch: suiteMatch('reliability'),
};
