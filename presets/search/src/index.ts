export { default, ANSWERER_PROMPT, BASE_CHECKPOINT, SEARCH_DEFAULTS, searchPreset, SEARCHER_PROMPT, VERIFIER_PROMPT } from './searchPreset.js';
export { searchTeacher, type SearchTeacherKnowledge } from './searchTeacher.js';
export { buildSearchBase, PRESET_DIR, writeSearchDemonstrations, type BuildBaseOptions } from './buildBase.js';
