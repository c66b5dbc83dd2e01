import {
  lossTotals,
  rowsWithAdvantage,
  type BatchView,
  type LossFunction,
  type Metrics,
  type OptimizerSettings,
  type PolicyBackend,
  type RatioDenominator,
  type TrainingBatch,
} from '@drmas/core';
import type { AgentRewardDiagnosis } from './agentRewardStatistics.js';

/**
 * The batch with other advantages (and no factor on them): a shallow copy sharing every other column, so nothing is
 * written to `batch`.
 */
function withAdvantages(batch: TrainingBatch, advantages: Float64Array): TrainingBatch {
  return Object.assign(Object.create(Object.getPrototypeOf(batch) as object) as TrainingBatch, batch, {
    advantages,
    advantageFactors: undefined,
  });
}

/** The agents (codes into `batch.ids.agent`) that own rows of the view, in code order. */
export function agentsOf(view: BatchView): number[] {
  const codes = view.batch.ids.agent.codes;
  return [...new Set(Array.from(view.rows, (row) => codes[row]!))].sort((a, b) => a - b);
}

/** What `update` needs besides the rows, for gradients that are measured and not applied. */
export interface MeasuredUpdateSettings {
  loss: LossFunction;
  microBatchSize: number;
  optimizer: OptimizerSettings;
  responseLength: number;
  /** Where the update's PPO ratio takes its old log-probs from (as the group's own update does). */
  oldLogProbs?: RatioDenominator;
}

/**
 * The squared norm of each agent's share of the gradient with `advantages` in place of the batch's, over the
 * view's rows (rows the loss ignores at those advantages left out), no step applied; undefined when the engine
 * does not split its gradient by agent.
 */
async function agentSquaredNorms(
  trainer: PolicyBackend,
  view: BatchView,
  advantages: Float64Array,
  settings: MeasuredUpdateSettings,
): Promise<number[] | undefined> {
  const batch = withAdvantages(view.batch, advantages);
  const whole = { batch, rows: view.rows };
  const computed = settings.loss.zeroAdvantageRowsInert ? rowsWithAdvantage(whole) : whole;
  const result = await trainer.update({
    batch: computed,
    totals: lossTotals(whole, { responseLength: settings.responseLength, microBatchSize: settings.microBatchSize }),
    loss: settings.loss,
    microBatchSize: settings.microBatchSize,
    optimizer: settings.optimizer,
    lrScale: 0,
    rowAgents: { codes: batch.ids.agent.codes, agentCount: batch.ids.agent.names.length },
    oldLogProbs: settings.oldLogProbs,
    measureOnly: true,
  });
  return result.agentGradNorms?.map((norm) => norm * norm);
}

/**
 * `agent/<role>/inflation_measured` for the view's agents: the squared norm of an agent's gradient under GRPO's
 * advantages (the group's global baseline) over that under per-agent normalized ones, both taken at the current
 * weights on the same rows (two extra forward and backward passes). An agent whose per-agent gradient is zero
 * (its rewards never vary within a group) gets no value.
 */
export async function measureInflation(
  trainer: PolicyBackend,
  view: BatchView,
  diagnosis: AgentRewardDiagnosis,
  settings: MeasuredUpdateSettings,
  metrics: Metrics,
): Promise<void> {
  const global = await agentSquaredNorms(trainer, view, diagnosis.globalAdvantages, settings);
  const perAgent = await agentSquaredNorms(trainer, view, diagnosis.perAgentAdvantages, settings);
  if (!global || !perAgent) return;
  for (const agent of agentsOf(view)) {
    if (perAgent[agent]! > 0) metrics[`agent/${view.batch.ids.agent.names[agent]}/inflation_measured`] = global[agent]! / perAgent[agent]!;
  }
}

/** Each agent's pre-clip gradient norms over a worker group's optimizer steps, as metrics and distributions. */
export class AgentGradNorms {
  private readonly norms = new Map<number, number[]>();

  constructor(private readonly agents: readonly number[]) {}

  /** One optimizer step's per-agent norms (`UpdateResult.agentGradNorms`); nothing when the engine gave none. */
  add(agentGradNorms: readonly number[] | undefined): void {
    if (!agentGradNorms) return;
    for (const agent of this.agents) {
      const list = this.norms.get(agent) ?? [];
      list.push(agentGradNorms[agent]!);
      this.norms.set(agent, list);
    }
  }

  /** `agent/<role>/grad_norm` (mean over the steps), `grad_norm_max`, and every step's norm in the distributions. */
  record(roles: readonly string[], metrics: Metrics, distributions: Record<string, number[]> | undefined): void {
    for (const [agent, norms] of this.norms) {
      const finite = norms.filter(Number.isFinite);
      const prefix = `agent/${roles[agent]}`;
      metrics[`${prefix}/grad_norm`] = norms.reduce((a, b) => a + b, 0) / norms.length;
      metrics[`${prefix}/grad_norm_max`] = finite.length ? Math.max(...finite) : 0;
      if (distributions) distributions[`${prefix}/grad_norm`] = norms;
    }
  }
}
