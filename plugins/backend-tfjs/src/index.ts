export { default, TfjsBackendPlugin, tfjsBackendFactory } from './plugin/TfjsBackendPlugin.js';
export {
  BackendDisposedError,
  createTfjsPolicyBackend,
  createTfjsPolicyBackend as createPolicyBackend,
  TfjsPolicyBackend,
  type TfjsBackendOptions,
} from './TfjsPolicyBackend.js';
export { loadDecoderModel, saveDecoderModel, type LoadedModel } from './model/modelCheckpoint.js';
export { DecoderModel } from './model/DecoderModel.js';
export {
  builtinRuntimeCandidates,
  RuntimeSelector,
  runtimeSelector,
  RuntimeUnavailableError,
  selectRuntime,
  type RuntimeCandidate,
  type SelectedRuntime,
} from './runtime/RuntimeSelector.js';
export { generateInChunks, generateTokens } from './generation/generateTokens.js';
export { scoreTokens } from './generation/scoreTokens.js';
export { PolicyTrainer } from './training/PolicyTrainer.js';
export { AdamW } from './training/AdamW.js';
export { tfjsTensorOps } from './training/TfjsTensorOps.js';
