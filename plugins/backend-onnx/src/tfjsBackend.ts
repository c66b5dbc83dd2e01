/**
 * What this package uses of `@drmas/plugin-backend-tfjs`: the decoder config, rope tables, batch layouts and
 * sampling (shared so both engines compute and sample identically), checkpoint loading, built-in models and the
 * tokenizer.
 */
export {
  configJsonFor,
  createBuiltinModel,
  createTfjsPolicyBackend,
  expectedWeightShapes,
  expectTensor,
  isBuiltinModelName,
  loadCheckpoint,
  parseModelConfig,
  saveCheckpoint,
  TfjsPolicyBackend,
  Tokenizer,
  type ArchitectureName,
  type CheckpointTensor,
  type DecoderConfig,
  type TfjsBackendOptions,
  rotaryInverseFrequencies,
  rotaryTables,
  leftPad,
  promptResponseLayout,
  SeededRandom,
  logProbAtTemperature,
  sampleToken,
  type SamplingSettings,
} from '@drmas/plugin-backend-tfjs';
