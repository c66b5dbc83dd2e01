export { default, TfjsBackendPlugin, tfjsBackendFactory } from './plugin/TfjsBackendPlugin.js';
export {
  BackendDisposedError, createTfjsPolicyBackend, createTfjsPolicyBackend as createPolicyBackend, TfjsPolicyBackend,
  type TfjsBackendOptions,
} from './TfjsPolicyBackend.js';
export {
  BUILTIN_MODELS, builtinConfigJson, builtinTokenizer, createBuiltinModel, isBuiltinModelName, type BuiltinModelName,
} from './builtin/builtinModels.js';
export { loadDecoderModel, saveDecoderModel, type LoadedModel } from './model/modelCheckpoint.js';
export {
  ARCHITECTURES, configJsonFor, expectedWeightShapes, isArchitectureName, parseModelConfig, type ArchitectureName,
  type DecoderConfig, type RopeScaling,
} from './model/ModelConfig.js';
export { DecoderModel } from './model/DecoderModel.js';
export {
  builtinRuntimeCandidates, RuntimeSelector, runtimeSelector, RuntimeUnavailableError, selectRuntime,
  type RuntimeCandidate, type SelectedRuntime,
} from './runtime/RuntimeSelector.js';
export { generateInChunks, generateTokens } from './generation/generateTokens.js';
export { scoreTokens } from './generation/scoreTokens.js';
export { PolicyTrainer } from './training/PolicyTrainer.js';
export { AdamW } from './training/AdamW.js';
export { tfjsTensorOps } from './training/TfjsTensorOps.js';
export { generateCommand, CommandInputError, type GenerateCommandOptions } from './cli/generateCommand.js';
export { openPolicyBackend, type EngineOptions } from './cli/openPolicyBackend.js';
export { rotaryInverseFrequencies, rotaryTables } from './model/rotaryEmbedding.js';
export { leftPad } from './model/batchLayout.js';
export { promptResponseLayout } from './model/responseLogProbs.js';
export { SeededRandom } from './model/SeededRandom.js';
export { logProbAtTemperature, sampleToken, type SamplingSettings } from './generation/sampling.js';
export { scoreCommand, type ScoreCommandOptions } from './cli/scoreCommand.js';
export * from './checkpoint/index.js';
export * from './tokenizer/index.js';
