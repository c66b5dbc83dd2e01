import { Environment, Tool, type ApplyContext, type Plugin, type RegisterContext } from '@drmas/core';
import { codeEnvKeys, codeEnvSettings } from '../environment/codeEnvConfig.js';
import { CodeEnvironment } from '../environment/CodeEnvironment.js';
import { pythonTool } from '../tool/pythonTool.js';

export const PLUGIN_NAME = 'env-code';

/**
 * Provides the `code` Environment (`env.name: code`): synthetic one-line functions or a code dataset, each answer
 * run with its tests in a sandbox; and the `python` Tool (a REPL in the same Pyodide sandbox) for tool-use
 * environments (env-tools' `env.tools.enabled`). Adds `env.code` to the `env` section.
 */
export class EnvCodePlugin implements Plugin {
  readonly name = PLUGIN_NAME;
  readonly configSchema = { env: codeEnvKeys };
  readonly configPaths = ['env.code.file', 'env.code.testFile'];
  private environment?: CodeEnvironment;

  register(ctx: RegisterContext): void {
    const environment = new CodeEnvironment(() => ctx.config.env);
    this.environment = environment;
    ctx.provide(Environment, 'code', environment);
    let limits: { timeoutMs: number; memoryBytes: number } | undefined;
    ctx.provide(
      Tool,
      'python',
      pythonTool({
        sandbox: () => environment.sandbox,
        limits: () => {
          if (!limits) {
            const { timeoutMs, memoryMb } = codeEnvSettings.parse(ctx.config.env).code.pythonTool;
            limits = { timeoutMs, memoryBytes: memoryMb * 1024 * 1024 };
          }
          return limits;
        },
      }),
    );
  }

  apply(kernel: ApplyContext): void {
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
