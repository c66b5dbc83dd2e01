export { defineTool, Tool, type ToolContext, type ToolDefinition } from './registry/ToolDefinition.js';
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
export { pythonTool, type PythonToolOptions } from './tools/pythonTool.js';
export { searchTool } from './tools/searchTool.js';
export type { ToolTask } from './tasks/ToolTask.js';
export {
  isHeldOutTask,
  syntheticToolTasks,
  TOOL_TASK_KINDS,
  TOOLS_HELD_OUT_SHARE,
  type SyntheticToolOptions,
  type ToolTaskKind,
} from './tasks/syntheticToolTasks.js';
export { loadToolTasks, splitToolTasks, type ToolRecord } from './tasks/loadToolTasks.js';
export { answerMatches, extractAnswer } from './environment/answerCheck.js';
export { NO_CALL_FEEDBACK, ToolEpisode, type ToolEpisodeOptions } from './environment/ToolEpisode.js';
export { ToolEnvironment, type ToolResolver } from './environment/ToolEnvironment.js';
export {
  BUILTIN_TOOLS,
  toolsEnvKeys,
  toolsEnvSettings,
  toolsSection,
  type ToolsEnvSettings,
  type ToolsEnvSettingsInput,
} from './environment/toolsEnvConfig.js';
export { EnvToolsPlugin, PLUGIN_NAME } from './plugin/EnvToolsPlugin.js';
export { default } from './plugin/EnvToolsPlugin.js';
