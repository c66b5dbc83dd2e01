import { Environment, Tool, type ApplyContext, type Plugin, type RegisterContext } from '@drmas/core';
import { BUILTIN_TOOLS, ToolEnvironment, toolTaskKinds, type ToolLookup } from '../environment/ToolEnvironment.js';
import { toolsEnvKeys, toolsSection } from '../environment/toolsEnvConfig.js';

export const PLUGIN_NAME = 'env-tools';

/**
 * Provides the `tools` Environment (`env.name: tools`) and its built-in tools as `Tool` contributions (calculator,
 * fs); other plugins add theirs (env-search's `search`, env-code's `python`, `ctx.provide(Tool, name, tool)`), and
 * `env.tools.enabled` lists the ones agents get.
 */
export class EnvToolsPlugin implements Plugin {
  readonly name = PLUGIN_NAME;
  readonly configSchema = { env: toolsEnvKeys };
  readonly configPaths = ['env.tools.file'];
  private environment?: ToolEnvironment;

  register(ctx: RegisterContext): void {
    this.environment = new ToolEnvironment(() => ctx.config.env);
    ctx.provide(Environment, 'tools', this.environment);
    for (const tool of BUILTIN_TOOLS) ctx.provide(Tool, tool.name, tool);
  }

  apply(kernel: ApplyContext): void {
    const lookup: ToolLookup = { tool: (name, key) => kernel.getNamed(Tool, name, key), names: () => kernel.namesOf(Tool) };
    this.environment?.lookUpIn(lookup);
    // A misspelt tool or task kind stops the run before setup, with the registered names.
    kernel.hooks.validate.tap(PLUGIN_NAME, (config) => {
      if (config.env.name !== 'tools') return;
      const tools = toolsSection.parse(config.env.tools ?? {});
      for (const name of tools.enabled) lookup.tool(name, 'env.tools.enabled');
      if (!tools.file) toolTaskKinds(lookup, tools.kinds);
    });
  }
}

/** The plugin module's default export: `plugins: ['env-tools']`. */
export default function envToolsPlugin(): EnvToolsPlugin {
  return new EnvToolsPlugin();
}
