import type { Kernel, RunContext } from '@drmas/core';

export interface DemonstrationLine {
  agent: string;
  /** The prompt exactly as the agent sent it. */
  prompt: string;
  response: string;
}

/**
 * Runs the kernel's rollout `rounds` times (its models should be teacher backends) and returns every turn as a
 * demonstration line, keeping only episodes whose outcome reaches `minOutcome` (default 1: successful ones).
 */
export async function collectDemonstrations(kernel: Kernel, run: RunContext, rounds: number, options: { minOutcome?: number } = {}): Promise<DemonstrationLine[]> {
  const lines: DemonstrationLine[] = [];
  for (let round = 1; round <= rounds; round++) {
    const batch = await kernel.hooks.rollout.promise({ run, step: round, metrics: {} });
    for (const trajectory of batch?.trajectories ?? []) {
      if ((trajectory.outcome ?? 0) < (options.minOutcome ?? 1)) continue;
      for (const turn of trajectory.turns) {
        lines.push({ agent: turn.agentId, prompt: turn.promptText ?? '', response: turn.responseText ?? '' });
      }
    }
  }
  return lines;
}
