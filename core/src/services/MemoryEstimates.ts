import { createToken } from '../di/Token.js';
import type { MemoryBudget } from '../run/memoryBudget.js';

/** What one kind of batch (a training step, an evaluation batch) is estimated to hold, against the budget. */
export interface MemoryEstimateReport {
  /** `a training step`, `an evaluation batch`. */
  what: string;
  bytes: number;
  /** The arithmetic, term by term, with the config keys each term comes from. */
  arithmetic: string;
  budget: MemoryBudget;
}

/**
 * The memory estimates the `validate` hook checked against `trainer.memoryBudget` (the orchestra's memory check),
 * for `drmas validate` to report: empty before the hook has run.
 */
export interface MemoryEstimates {
  estimates(): readonly MemoryEstimateReport[];
}
export const MemoryEstimates = createToken<MemoryEstimates>('MemoryEstimates', { label: 'memory estimates' });
