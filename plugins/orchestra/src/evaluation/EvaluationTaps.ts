import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { z, type Environment, type EvalContext, type ApplyContext, type Metrics, type Plugin } from '@drmas/core';
import { evaluateSamples } from '@drmas/plugin-algorithms';
import { evaluateEpisodes, EVAL_SAMPLING } from '../rollout/evaluateEpisodes.js';
import type { EpisodeRunner } from '../rollout/OrchestraRunner.js';
import { ORCHESTRA_LIMITS } from '../plugin/orchestraConfig.js';
import { checkEvalTasks } from '../plugin/rolloutLimits.js';
import type { OrchestraConfig } from '../plugin/orchestraSchema.js';

const TAP_NAME = 'orchestra:evaluate';

/** Keys the evaluation adds to the `eval` section (core owns `every` and `atEnd`). */
export const evalSection = z.strictObject({
  /** Samples per test task; metrics are avg@k and pass@k. */
  k: z.number().int().positive().max(ORCHESTRA_LIMITS.evalK).default(16),
  /** Test tasks used (the first ones of the held-out split, which must have that many); 0 for all. */
  tasks: z.number().int().min(0).max(ORCHESTRA_LIMITS.evalTasks).default(0),
  temperature: z.number().min(0).default(EVAL_SAMPLING.temperature!),
  topP: z.number().gt(0).max(1).default(EVAL_SAMPLING.topP!),
  /** Tasks whose k episodes run in one batch. */
  tasksPerBatch: z.number().int().positive().max(ORCHESTRA_LIMITS.evalTasks).default(16),
});
export type EvalSettings = z.output<typeof evalSection>;

/**
 * Evaluation on the environment's held-out split (`evaluate` hook): k episodes per task with validation sampling,
 * reported as `val/avg@k`, `val/pass@k`, the same per data source, and per-agent turn statistics; each evaluation
 * is also appended to `eval.jsonl` in the run directory.
 */
export class EvaluationTaps implements Plugin<unknown, { eval: typeof evalSection }> {
  readonly name = TAP_NAME;

  constructor(private readonly workflow: () => { environment(): Environment; runner(): EpisodeRunner }) {}

  apply(kernel: ApplyContext<OrchestraConfig>): void {
    kernel.hooks.evaluate.tapPromise(TAP_NAME, async (evaluation) => {
      await this.evaluate(kernel, evaluation);
    });
  }

  async evaluate(kernel: ApplyContext<OrchestraConfig>, evaluation: EvalContext): Promise<Metrics> {
    const settings = kernel.config.eval;
    const environment = this.workflow().environment();
    await environment.init();
    const all = environment.test();
    checkEvalTasks(settings, all.length, kernel.config.env.name ?? '(unnamed)');
    const tasks = settings.tasks > 0 ? all.slice(0, settings.tasks) : all;
    const result = await evaluateEpisodes(this.workflow().runner(), tasks, {
      k: settings.k,
      seed: kernel.config.trainer.seed,
      tasksPerBatch: settings.tasksPerBatch,
      sampling: { temperature: settings.temperature, topP: settings.topP },
    });
    const { overall, bySource } = evaluateSamples(result.tasks, settings.k);
    const metrics: Metrics = {
      [`val/avg@${settings.k}`]: overall.avg,
      [`val/pass@${settings.k}`]: overall.pass,
      'val/tasks': overall.tasks,
    };
    for (const [source, summary] of Object.entries(bySource)) {
      metrics[`val/${source}/avg@${settings.k}`] = summary.avg;
      metrics[`val/${source}/pass@${settings.k}`] = summary.pass;
    }
    for (const [agent, stats] of Object.entries(result.agents)) {
      // Evaluation has no reward hook: each turn counts its episode's outcome, hence `outcome_mean`, not `reward_mean`.
      const outcomes = result.trajectories.flatMap((t) => t.turns.filter((turn) => turn.agentId === agent).map(() => t.outcome ?? 0));
      metrics[`val/agent/${agent}/turns`] = stats.turns;
      metrics[`val/agent/${agent}/valid_fraction`] = stats.turns ? 1 - stats.invalidTurns / stats.turns : 0;
      metrics[`val/agent/${agent}/outcome_mean`] = outcomes.length ? outcomes.reduce((a, b) => a + b, 0) / outcomes.length : 0;
      metrics[`val/agent/${agent}/response_length_mean`] = stats.turns ? stats.responseTokens / stats.turns : 0;
    }
    Object.assign(evaluation.metrics, metrics);
    mkdirSync(evaluation.run.runDir, { recursive: true });
    appendFileSync(path.join(evaluation.run.runDir, 'eval.jsonl'), `${JSON.stringify({ step: evaluation.step, ...metrics })}\n`);
    return metrics;
  }
}

declare module '@drmas/core' {
  interface EvalConfig extends z.input<typeof evalSection> {}
}
