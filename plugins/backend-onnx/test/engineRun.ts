import type { MemoryBudget } from '@drmas/core';

/** The memory budget of the run contexts these tests make engines in: none, so large models take the least micro-batch. */
export const TEST_BUDGET: MemoryBudget = { bytes: 0, description: 'none (a test)' };
