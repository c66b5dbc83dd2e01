import { Environment, type Kernel, type Plugin, type RegisterContext } from '@drmas/core';
import { codeEnvKeys } from '../environment/codeEnvConfig.js';
import { CodeEnvironment } from '../environment/CodeEnvironment.js';

export const PLUGIN_NAME = 'env-code';

/**
 * Provides the `code` Environment (`env.name: code`): synthetic one-line functions or a code dataset, each answer
 * run with its tests in a sandbox. Adds `env.code` to the `env` section.
 */
export class EnvCodePlugin implements Plugin {
  readonly name = PLUGIN_NAME;
  readonly configSchema = { env: codeEnvKeys };
  readonly configPaths = ['env.code.file', 'env.code.testFile'];
  private environment?: CodeEnvironment;

  register(ctx: RegisterContext): void {
    this.environment = new CodeEnvironment(() => ctx.config.env);
    ctx.provide(Environment, 'code', this.environment);
  }

  apply(kernel: Kernel): void {
    // The Pyodide worker is unref'd, so it never holds the process open; ending it here frees its memory at once.
    kernel.hooks.shutdown.tapPromise(PLUGIN_NAME, async () => {
      await this.environment?.dispose();
    });
  }
}

/** The plugin module's default export: `plugins: ['env-code']`. */
export default function envCodePlugin(): EnvCodePlugin {
  return new EnvCodePlugin();
}
