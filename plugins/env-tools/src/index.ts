export {
  ToolRegistry,
  ToolSession,
  type ToolErrorKind,
  type ToolOutcome,
  type ToolRegistryOptions,
  type ToolSchema,
} from './registry/ToolRegistry.js';
export { calculatorTool, evaluateExactly, MAX_EXPONENT, MAX_RESULT_DIGITS } from './tools/calculator.js';
export { episodePath, FILESYSTEM_LIMITS, filesystemTool } from './tools/filesystemTool.js';
export type { ToolTask } from './tasks/ToolTask.js';
export { isHeldOutTask, syntheticToolTasks, TOOLS_HELD_OUT_SHARE, type SyntheticToolOptions } from './tasks/syntheticToolTasks.js';
export { arithmeticTasks, fileTasks } from './tasks/toolTaskKinds.js';
export { loadToolTasks, splitToolTasks, type ToolRecord } from './tasks/loadToolTasks.js';
export { answerMatches, extractAnswer } from './environment/answerCheck.js';
export { NO_CALL_FEEDBACK, ToolEpisode, type ToolEpisodeOptions } from './environment/ToolEpisode.js';
export { BUILTIN_TOOLS, ToolEnvironment, toolLookup, toolTaskKinds, type ToolLookup } from './environment/ToolEnvironment.js';
export {
  toolsEnvKeys,
  toolsEnvSettings,
  toolsSection,
  type ToolsEnvSettings,
  type ToolsEnvSettingsInput,
} from './environment/toolsEnvConfig.js';
export { EnvToolsPlugin, PLUGIN_NAME } from './plugin/EnvToolsPlugin.js';
export { default } from './plugin/EnvToolsPlugin.js';
