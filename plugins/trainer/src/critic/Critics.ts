import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  DrmasError,
  lossTotals,
  longestResponse,
  rowTrains,
  type BatchView,
  type CriticContexts,
  type Metrics,
  type Rng,
  type RunContext,
  type TrainingBatch,
  type ValueLossFunction,
  type ValueModel,
  type WorkerGroups,
  type Engines,
} from '@drmas/core';
import type { TrainedWorkerGroup } from '../WorkerGroupsService.js';
import { miniBatchViews } from '../updateWorkerGroup.js';
import { jointContexts } from './jointContexts.js';
import { TeamMixer } from '../mixer/TeamMixer.js';
import type { CriticSettings } from '../config/criticConfig.js';
import { describeSpike, SpikeGuards, watchStep } from '../spikeGuard/GradNormSpikeGuard.js';
import type { CriticPlan } from './criticPlan.js';
import type { CriticLearner } from './CriticLearner.js';

/** Where a checkpoint keeps its critics: `critics/<critic id>/`, beside the worker groups' folders. */
export const CRITICS_DIR = 'critics';
/** The critics' spike-guard windows in a checkpoint's critics folder (`critic.spikeGuard`): `{ <critic id>: norms }`. */
export const CRITIC_SPIKE_GUARDS_FILE = 'spike_guards.json';

/** A live critic: its plan and its engine's value model. */
export interface Critic {
  plan: CriticPlan;
  model: ValueModel;
  /** The longest sequence its trunk takes (the policy's positions), for the joint context's length. */
  maxPositions: number | undefined;
}

/** The rows of `batch` whose agent is one of `agents`. */
function rowsOf(batch: TrainingBatch, agents: readonly string[]): BatchView {
  const { names, codes } = batch.ids.agent;
  const wanted = new Set(agents);
  const rows: number[] = [];
  for (let r = 0; r < batch.rows; r++) if (wanted.has(names[codes[r]!]!)) rows.push(r);
  return batch.view(rows);
}

/** Masked mean of `column` and veRL's explained variance 1 - var(R - V) / (var(R) + 1e-5) (unbiased variances) over the view's tokens. */
function valueStatistics(view: BatchView): { mean: number; explainedVariance: number; returnsMean: number } {
  const { responseLength: R, responseMask, values, returns } = view.batch;
  const v: number[] = [];
  const ret: number[] = [];
  for (const row of view.rows) {
    if (!rowTrains(view.batch, row)) continue;
    for (let t = 0; t < R; t++) {
      if (responseMask[row * R + t] === 0) continue;
      v.push(values![row * R + t]!);
      ret.push(returns[row * R + t]!);
    }
  }
  const mean = (xs: number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0);
  const variance = (xs: number[]) => {
    if (xs.length < 2) return 0;
    const m = mean(xs);
    return xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1);
  };
  return {
    mean: mean(v),
    explainedVariance: 1 - variance(ret.map((r, i) => r - v[i]!)) / (variance(ret) + 1e-5),
    returnsMean: mean(ret),
  };
}

/**
 * The run's critics: created at setup on their policy model's engine, they fill `TrainingBatch.values` before the
 * estimator runs (each critic its agents' rows, masked as veRL's `values * response_mask`) and learn from the step's
 * returns with the clipped value loss once the advantages are in (veRL's order: critic update, then actor update).
 */
export class Critics {
  private critics: Critic[] = [];
  /** What `create` makes: set at `validate`, once the estimators are known. */
  plans: readonly CriticPlan[] = [];

  /** The learner `critic.learner` names, once the critics are planned (at `validate`). */
  get learner(): CriticLearner | undefined {
    return this.plans[0]?.kind;
  }
  /** VDN's or QMIX's team value over the per-role critics (`critic.learner: vdn | qmix`). */
  private mixer: TeamMixer | undefined;
  /** Each critic's gradient-norm spike guard (`critic.spikeGuard`), by critic id. */
  private guards: SpikeGuards | undefined;

  get all(): readonly Critic[] {
    return this.critics;
  }

  /**
   * Creates every planned critic on the engine that trains its policy group (`engineOf`: `backend: auto` is chosen at
   * setup); a built-in trunk without `seed` is initialized from `seed` (trainer.seed), as its policy is.
   */
  async create(
    run: RunContext,
    engines: Engines,
    groups: WorkerGroups,
    seed: number,
    engineOf: (groupId: string) => string,
    section: Pick<CriticSettings, 'mixer' | 'spikeGuard'>,
  ): Promise<void> {
    for (const plan of this.plans) {
      const factory = engines.get(engineOf(plan.policyGroup), `models.${plan.policyGroup}.backend`);
      const policy = groups.get(plan.policyGroup) as TrainedWorkerGroup;
      const settings = { ...plan.settings, seed: plan.settings.seed ?? seed } as Record<string, unknown>;
      const model = await factory.createCritic!({
        criticId: plan.id,
        settings,
        run,
        shareTrunk: plan.shareTrunk ? policy.trainer : undefined,
      });
      this.critics.push({ plan, model, maxPositions: policy.trainer.maxPositions });
      run.log(
        `critic ${plan.id} (${plan.learner}): values the turns of ${plan.agents.join(', ')}${plan.joint ? ' over the joint context' : ''}`,
      );
    }
    const spikeGuard = section.spikeGuard;
    if (spikeGuard) this.guards = new SpikeGuards(new Map(this.plans.map((plan) => [plan.id, spikeGuard])));
    const credit = this.plans[0]?.kind.credit;
    if (credit === 'vdn' || credit === 'qmix') {
      this.mixer = new TeamMixer(
        credit,
        this.plans.flatMap((plan) => plan.agents),
        section.mixer,
        seed,
      );
      run.log(`${credit} mixer over the critics of ${this.mixer.roles.join(', ')} (${this.mixer.parameterCount} parameters)`);
    }
  }

  private contexts(critic: Critic, view: BatchView): CriticContexts | undefined {
    return critic.plan.joint ? jointContexts(view, critic.maxPositions) : undefined;
  }

  /**
   * Fills `batch.values` at every critic's rows (0 elsewhere and beyond each response); with a mixer, credits each
   * mixed row with its agent's share of the team's TD error (its token rewards: `TeamMixer.credit`).
   */
  async fill(batch: TrainingBatch, metrics: Metrics): Promise<void> {
    const R = batch.responseLength;
    const values = new Float64Array(batch.rows * R);
    for (const critic of this.critics) {
      const view = rowsOf(batch, critic.plan.agents);
      if (view.rows.length === 0) continue;
      const predicted = await critic.model.values({ batch: view, contexts: this.contexts(critic, view) });
      view.rows.forEach((row, i) => {
        for (let t = 0; t < R; t++) values[row * R + t] = predicted[i * R + t]! * batch.responseMask[row * R + t]!;
      });
    }
    batch.values = values;
    this.mixer?.credit(batch, metrics);
  }

  /** Each critic's `epochs` x `miniBatches` optimizer steps on its rows; metrics under `critic/<id>/`. */
  async update(
    batch: TrainingBatch,
    options: {
      rng: (criticId: string) => Rng;
      loss: ValueLossFunction;
      lrScale: number;
      metrics: Metrics;
      /** The training step and the run log, for the spike guards' lines. */
      step: number;
      log: (line: string) => void;
    },
  ): Promise<void> {
    if (!batch.values) return;
    for (const critic of this.critics) {
      const view = rowsOf(batch, critic.plan.agents);
      if (view.rows.length === 0) continue;
      const prefix = `critic/${critic.plan.id}`;
      const stats = valueStatistics(view);
      options.metrics[`${prefix}/values/mean`] = stats.mean;
      options.metrics[`${prefix}/returns/mean`] = stats.returnsMean;
      options.metrics[`${prefix}/vf_explained_var`] = stats.explainedVariance;
      const contexts = this.contexts(critic, view);
      const { epochs, miniBatches, microBatchSize, optimizer } = critic.plan.training;
      const responseLength = longestResponse(view);
      const rng = options.rng(critic.plan.id);
      const sums: Record<string, number> = {};
      let updates = 0;
      let skipped = 0;
      let spikes = 0;
      const guard = this.guards?.of(critic.plan.id);
      for (let epoch = 0; epoch < epochs; epoch++) {
        for (const miniBatch of miniBatchViews(view, rng, miniBatches)) {
          const watch = watchStep(guard);
          const result = await critic.model.update({
            batch: miniBatch,
            contexts,
            totals: lossTotals(miniBatch, { responseLength, microBatchSize }),
            loss: options.loss,
            microBatchSize,
            optimizer,
            lrScale: options.lrScale,
            acceptGradNorm: watch.acceptGradNorm,
          });
          updates++;
          const judged = watch.settle(result.gradNorm);
          if (judged?.spike) {
            spikes++;
            options.log(describeSpike(`critic ${critic.plan.id}`, options.step, updates, result.gradNorm, judged, guard!.settings.action));
          }
          if (result.skipped) skipped++;
          for (const [key, value] of Object.entries({ ...result.metrics, grad_norm: result.gradNorm }))
            sums[key] = (sums[key] ?? 0) + value;
        }
      }
      for (const [key, value] of Object.entries(sums)) options.metrics[`${prefix}/${key}`] = value / updates;
      options.metrics[`${prefix}/lr`] = optimizer.lr * options.lrScale;
      options.metrics[`${prefix}/updates`] = updates;
      options.metrics[`${prefix}/skipped_steps`] = skipped;
      if (guard) options.metrics[`${prefix}/spikes`] = spikes;
    }
    this.mixer?.train(options.metrics);
  }

  async save(checkpointDir: string): Promise<void> {
    for (const critic of this.critics) await critic.model.save(path.join(checkpointDir, CRITICS_DIR, critic.plan.id));
    this.mixer?.save(path.join(checkpointDir, CRITICS_DIR));
    if (!this.guards) return;
    const dir = path.join(checkpointDir, CRITICS_DIR);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, CRITIC_SPIKE_GUARDS_FILE), `${JSON.stringify(this.guards.getState())}\n`);
  }

  /** The guards' windows as a checkpoint left them; none saved (a checkpoint from before `critic.spikeGuard`): empty windows. */
  private loadGuards(criticsDir: string): void {
    const file = path.join(criticsDir, CRITIC_SPIKE_GUARDS_FILE);
    if (!this.guards || !existsSync(file)) return;
    let saved: unknown;
    try {
      saved = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      throw new DrmasError('CHECKPOINT_INVALID', `the critics' spike-guard windows are not JSON: ${(error as Error).message}`, {
        file,
        hint: 'resume from another checkpoint, or start the run afresh',
      });
    }
    this.guards.setState(saved);
  }

  async load(checkpointDir: string): Promise<void> {
    for (const critic of this.critics) {
      const dir = path.join(checkpointDir, CRITICS_DIR, critic.plan.id);
      if (!existsSync(dir)) {
        throw new DrmasError(
          'CHECKPOINT_INVALID',
          `the checkpoint holds no critic "${critic.plan.id}", which this run's critic.learner has`,
          {
            file: dir,
            hint: 'resume with the config that wrote the checkpoint (config.json in its run directory), or start a new run without --resume',
          },
        );
      }
      await critic.model.load(dir);
    }
    this.mixer?.load(path.join(checkpointDir, CRITICS_DIR));
    this.loadGuards(path.join(checkpointDir, CRITICS_DIR));
  }

  dispose(): void {
    for (const critic of this.critics) critic.model.dispose();
    this.critics = [];
    this.mixer = undefined;
    this.guards = undefined;
  }
}
