export { default, BASE_CHECKPOINT, MATH_DEFAULTS, mathPreset, SOLVER_PROMPT, VERIFIER_PROMPT } from './mathPreset.js';
export { mathTeacher } from './mathTeacher.js';
export { buildMathBase, PRESET_DIR, writeMathDemonstrations, type BuildBaseOptions } from './buildBase.js';
