export type { ArithmeticTask, MathSplit, MathTask, MathTaskSource, SolutionStep, TaskBatch } from './MathTask.js';
export { isArithmeticTask } from './MathTask.js';
export { MathDatasetError, MathTaskSourceError, type MathDatasetErrorDetails } from './errors.js';

export {
  arithmeticQuestionSet,
  ArithmeticTaskSource,
  ARITHMETIC_DATA_SOURCE,
  HELD_OUT_SHARE,
  isHeldOutProblem,
  type ArithmeticTaskSourceOptions,
} from './ArithmeticTaskSource.js';
export { ARITHMETIC_LEVELS } from './arithmetic/generateProblem.js';

export { loadMathDataset, type LoadMathDatasetOptions } from './loadMathDataset.js';
export { DatasetTaskSource, type DatasetTaskSourceOptions, type DatasetTaskSourceFileOptions } from './DatasetTaskSource.js';

export { normalizeMathAnswer } from './normalizeAnswer.js';
export { parseExactNumber, type ExactNumber } from './numericAnswer.js';
export { latexToMathjs, symbolicallyEqual } from './symbolicEquivalence.js';
export { mathAnswerFormat, mathAnswersEqual } from './answerEquivalence.js';
export { scoreMathResponse, type MathScore, type MathScoreReason } from './scoreMathResponse.js';
export { checkArithmeticClaims, type ArithmeticClaims } from './arithmeticClaims.js';

export { solverDemonstration, verifierDemonstration, type DemonstrationStyle } from './demonstrations.js';
export { columnWork } from './columnArithmetic.js';
export { extractVerifierVerdict, VERIFY_APPROVE, VERIFY_REJECT, type VerifierVerdict } from './verifierVerdict.js';

export { MathEnvironment, MathEpisode } from './environment/MathEnvironment.js';
export { mathEnvKeys, mathEnvSettings, type MathEnvSettings, type MathEnvSettingsInput } from './environment/mathEnvConfig.js';
export { EnvMathPlugin, PLUGIN_NAME } from './plugin/EnvMathPlugin.js';
export { default } from './plugin/EnvMathPlugin.js';
