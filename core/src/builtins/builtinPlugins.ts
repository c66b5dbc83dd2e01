import type { Plugin } from '../plugins/Plugin.js';
import { AdvantagePlugin } from './AdvantagePlugin.js';
import { RunDirectoryPlugin } from './RunDirectoryPlugin.js';

export type CommandName = 'train' | 'eval' | 'info';

/** The plugins the kernel adds itself, before the user's: built-in behaviour is written as plugins too. */
export function builtinPlugins(command: CommandName): Plugin[] {
  const plugins: Plugin[] = [new AdvantagePlugin()];
  if (command !== 'info') plugins.push(new RunDirectoryPlugin());
  return plugins;
}
