import { Environment, type Kernel, type Plugin, type RegisterContext } from '@drmas/core';
import { Tool } from '../registry/ToolDefinition.js';
import { toolsEnvKeys, toolsSection } from '../environment/toolsEnvConfig.js';
import { ToolEnvironment } from '../environment/ToolEnvironment.js';

export const PLUGIN_NAME = 'env-tools';

/**
 * Provides the `tools` Environment (`env.name: tools`) and the built-in tools as `Tool` contributions (calculator,
 * search, python, fs); a plugin adds a tool with `ctx.provide(Tool, name, tool)` and `env.tools.enabled` lists it.
 */
export class EnvToolsPlugin implements Plugin {
  readonly name = PLUGIN_NAME;
  readonly configSchema = { env: toolsEnvKeys };
  readonly configPaths = ['env.tools.file'];
  private environment?: ToolEnvironment;

  register(ctx: RegisterContext): void {
    const environment = new ToolEnvironment(() => ctx.config.env);
    this.environment = environment;
    ctx.provide(Environment, 'tools', environment);
    for (const tool of environment.builtinTools()) ctx.provide(Tool, tool.name, tool);
  }

  apply(kernel: Kernel): void {
    const resolve = (names: readonly string[]) => names.map((name) => kernel.getNamed(Tool, name, 'env.tools.enabled'));
    this.environment?.resolveToolsWith(resolve);
    // A misspelt tool stops the run before setup, with the registered names.
    kernel.hooks.validate.tap(PLUGIN_NAME, (config) => {
      if (config.env.name === 'tools') resolve(toolsSection.parse(config.env.tools ?? {}).enabled);
    });
    // The Python tool's Pyodide worker is unref'd; ending it here frees its memory at once.
    kernel.hooks.shutdown.tapPromise(PLUGIN_NAME, async () => {
      await this.environment?.dispose();
    });
  }
}

/** The plugin module's default export: `plugins: ['env-tools']`. */
export default function envToolsPlugin(): EnvToolsPlugin {
  return new EnvToolsPlugin();
}
