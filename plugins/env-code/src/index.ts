export {
  CODE_LANGUAGES,
  DEFAULT_SANDBOX_LIMITS,
  sandboxLimits,
  type CodeLanguage,
  type CodeSandbox,
  type CodeTest,
  type SandboxLimits,
  type SandboxRequest,
  type SandboxRun,
  type SandboxStatus,
  type TestResult,
} from './sandbox/CodeSandbox.js';
export { QUICKJS_KILL_GRACE_MS, QuickJsSandbox } from './sandbox/QuickJsSandbox.js';
export { PyodideSandbox, type PyodideSandboxOptions } from './sandbox/PyodideSandbox.js';
export { CodeSandboxes } from './sandbox/CodeSandboxes.js';
export { jsonValuesEqual } from './sandbox/compareOutputs.js';

export type { CodeSplit, CodeTask } from './tasks/CodeTask.js';
export { loadCodeDataset, splitCodeTasks, type LoadCodeDatasetOptions } from './tasks/loadCodeDataset.js';
export {
  CODE_HELD_OUT_SHARE,
  isHeldOutFunction,
  SYNTHETIC_CODE_SOURCE,
  syntheticCodeTasks,
  syntheticSolution,
  type SyntheticCodeOptions,
} from './tasks/syntheticCodeTasks.js';
export { FUNCTION_TEMPLATES, type FunctionTemplate } from './tasks/syntheticTemplates.js';

export { extractCode, type CodeSource, type ExtractedCode } from './environment/extractCode.js';
export { pythonTool, type PythonToolOptions } from './tool/pythonTool.js';
export { verifyCode, type CodeVerdict } from './verifyCode.js';
export { CodeEnvironment, CodeEpisode } from './environment/CodeEnvironment.js';
export { codeEnvKeys, codeEnvSettings, codeSection, type CodeEnvSettings, type CodeEnvSettingsInput } from './environment/codeEnvConfig.js';
export { EnvCodePlugin, PLUGIN_NAME } from './plugin/EnvCodePlugin.js';
export { default } from './plugin/EnvCodePlugin.js';
