import { Environment, type Plugin, type RegisterContext } from '@drmas/core';
import { debateEnvKeys } from '../environment/debateEnvConfig.js';
import { DebateEnvironment } from '../environment/DebateEnvironment.js';

export const PLUGIN_NAME = 'env-debate';

/**
 * Provides the `debate` Environment (`env.name: debate`): debates on synthetic math questions or motions, or a
 * dataset, judged from the `debate` orchestra's transcript. Adds `env.debate` to the `env` section.
 */
export class EnvDebatePlugin implements Plugin {
  readonly name = PLUGIN_NAME;
  readonly configSchema = { env: debateEnvKeys };
  readonly configPaths = ['env.debate.file', 'env.debate.testFile'];

  register(ctx: RegisterContext): void {
    ctx.provide(Environment, 'debate', new DebateEnvironment(() => ctx.config.env));
  }
}

/** The plugin module's default export: `plugins: ['env-debate']`. */
export default function envDebatePlugin(): EnvDebatePlugin {
  return new EnvDebatePlugin();
}
