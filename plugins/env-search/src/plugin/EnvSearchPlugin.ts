import { Environment, Tool, type Plugin, type PluginConfig, type RegisterContext } from '@drmas/core';
import { searchEnvKeys, searchEnvSettings } from '../environment/searchEnvConfig.js';
import { SearchEnvironment } from '../environment/SearchEnvironment.js';
import { searchTool, type SearchToolSettings } from '../tool/searchTool.js';

const envSearchSchema = { env: searchEnvKeys };

export const PLUGIN_NAME = 'env-search';

/**
 * Provides the `search` Environment (`env.name: search`): questions answered with a search engine (the synthetic
 * knowledge base and BM25 by default); and the `search` Tool (BM25 over the knowledge base, with its `lookup` tasks)
 * for tool-use environments (env-tools' `env.tools.enabled`). Adds its keys to the `env` section; the orchestra that
 * runs it initializes it in `setup`.
 */
export class EnvSearchPlugin implements Plugin<unknown, typeof envSearchSchema> {
  readonly name = PLUGIN_NAME;
  readonly configSchema = envSearchSchema;
  readonly configPaths = ['env.questionsFile', 'env.corpusFile'];

  register(ctx: RegisterContext<PluginConfig<typeof envSearchSchema>>): void {
    ctx.provide(Environment, 'search', new SearchEnvironment(() => ctx.config.env));
    let settings: SearchToolSettings | undefined;
    ctx.provide(
      Tool,
      'search',
      searchTool(() => (settings ??= searchEnvSettings.parse(ctx.config.env))),
    );
  }
}

/** The plugin module's default export: `plugins: ['env-search']`. */
export default function envSearchPlugin(): EnvSearchPlugin {
  return new EnvSearchPlugin();
}
