import { EnginesPlugin } from '../engines/EnginesPlugin.js';
import type { Plugin } from '../plugins/Plugin.js';
import { AdvantagePlugin } from './AdvantagePlugin.js';
import { RunDirectoryPlugin } from './RunDirectoryPlugin.js';

/**
 * The plugins every kernel adds before the user's (built-in behaviour is written as plugins too): the advantage
 * estimator named by `algorithm.advantage`, the run directory with its `metrics.jsonl` sink, and the engine service.
 */
export function builtinPlugins(): Plugin[] {
  return [new AdvantagePlugin(), new RunDirectoryPlugin(), new EnginesPlugin()];
}
