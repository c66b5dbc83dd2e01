/** Short prompts: the tiny models read every prompt token on a CPU, and learn the format from demonstrations. */
export const SOLVER_PROMPT = 'Solve: {question}\n{team_context}';
export const VERIFIER_PROMPT = 'Check: {question}\n{team_context}';
