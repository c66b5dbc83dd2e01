/**
 * `npm run test:e2e`: drmas used as a user would, end to end: a project outside the repository that installs the
 * packed packages (`installs.e2e`, slow), loads TypeScript configs and plugins (`typescript-loading.e2e`), writes
 * its own plugin, environment and typed config, and the shipped example configs (`marl-examples`,
 * `experiment-grid`). `.ci/run` runs it as a block of its own; the default suite (jest.config.js) leaves it out.
 */
import base, { suiteMatch } from './jest.config.js';

export default {
  ...base,
  testMatch: suiteMatch('e2e'),
};
