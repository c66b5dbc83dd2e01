import path from 'node:path';
import {
  Checkpointable, InfoSection, LossFunction, SeededRng, Stage, WorkerGroups, z, type Kernel, type Plugin, type RegisterContext,
  type RunContext,
} from '@drmas/core';
import { restoreCheckpoint, saveCheckpoint } from './Checkpoints.js';
import { appendRollouts } from './RolloutLog.js';
import { batchMetrics } from './stepMetrics.js';
import { updateWorkerGroup, type OldLogProbSource } from './updateWorkerGroup.js';
import { WorkerGroupsService } from './WorkerGroupsService.js';
import { planWorkerGroups } from './workerGroupPlan.js';

const PLUGIN_NAME = 'trainer';

/**
 * The training side of the loop: worker groups from `models`/`agents` (setup), one policy update per worker group
 * (`update`), step metrics, `rollouts.jsonl`, atomic checkpoints every `trainer.saveEvery` steps, at the end and
 * on SIGINT, and exact resume from `--resume`. A step's checkpoint is written after its metrics line (at the next
 * `beforeStep` or at `shutdown`), so a resumed run never lacks a line before its checkpoint; a failed run saves
 * nothing, since its worker groups may be half updated.
 */
export class TrainerPlugin implements Plugin {
  readonly name = PLUGIN_NAME;
  readonly configSchema = {
    trainer: z.object({
      /** Trajectories per step written to rollouts.jsonl (0: none). */
      logRollouts: z.number().int().min(0).default(16),
      /**
       * The PPO ratio's old log-probs: `recompute` scores each batch with the trainer first (veRL's default);
       * `rollout` takes the rollout engine's sampling log-probs (veRL's bypass mode), one forward pass fewer.
       */
      oldLogProbs: z.enum(['recompute', 'rollout']).default('recompute'),
    }),
  };
  private readonly groups = new WorkerGroupsService();
  private stepStarted = 0;
  /** The step whose checkpoint is due; written once that step's metrics line is out (next beforeStep or shutdown). */
  private pendingSave: { step: number; run: RunContext } | undefined;
  private failed = false;

  register(ctx: RegisterContext): void {
    ctx.bind(WorkerGroups).toConstantValue(this.groups);
    ctx.bind(InfoSection).toConstantValue({
      title: 'workerGroups',
      describe: (kernel) => planWorkerGroups(kernel.config).map((plan) => ({
        id: plan.id, agents: plan.agents, backend: plan.settings.backend, rollout: plan.settings.rollout ?? plan.settings.backend,
        model: plan.settings.model, architecture: plan.settings.architecture ?? '(from checkpoint)', runtime: plan.settings.runtime,
        lr: plan.training.lr, microBatchSize: plan.training.microBatchSize,
      })),
    });
  }

  apply(kernel: Kernel): void {
    const trainer = () => kernel.config.trainer as typeof kernel.config.trainer & { logRollouts: number; oldLogProbs: OldLogProbSource };

    kernel.hooks.setup.tapPromise({ name: PLUGIN_NAME, stage: Stage.MODEL }, async (run) => {
      const loss = kernel.container.isBound(LossFunction) ? kernel.get(LossFunction) : undefined;
      await this.groups.create(kernel, run, { reference: loss?.needsReference ?? false });
    });
    kernel.hooks.setup.tapPromise({ name: PLUGIN_NAME, stage: Stage.OBSERVE }, async (run) => {
      if (!run.resumeFrom) return;
      const state = await restoreCheckpoint(run.resumeFrom, this.groups.all(), kernel.getAll(Checkpointable));
      run.log(`restored step ${state.step} from ${run.resumeFrom}`);
    });

    const savePending = async () => {
      const pending = this.pendingSave;
      this.pendingSave = undefined;
      if (!pending || this.failed || this.groups.all().length === 0) return;
      const { keepLast, seed } = trainer();
      const dir = await saveCheckpoint(pending.run.runDir, pending.step, seed, this.groups.all(), kernel.getAll(Checkpointable), keepLast);
      pending.run.log(`checkpoint ${dir}`);
    };

    kernel.hooks.beforeStep.tapPromise({ name: PLUGIN_NAME, stage: Stage.FIRST }, async () => {
      await savePending();
      this.stepStarted = performance.now();
    });

    kernel.hooks.update.tapPromise(PLUGIN_NAME, async (batch, step) => {
      const group = this.groups.get(batch.workerGroupId);
      const rng = new SeededRng(kernel.config.trainer.seed).fork(`update/${step.step}/${group.id}`);
      await updateWorkerGroup(group, batch, kernel.get(LossFunction, { key: 'algorithm.loss' }), rng, step.metrics, trainer().oldLogProbs);
    });

    kernel.hooks.afterStep.tap({ name: PLUGIN_NAME, stage: Stage.OBSERVE }, (result) => {
      Object.assign(result.metrics, batchMetrics(result.batch, (performance.now() - this.stepStarted) / 1000));
    });

    kernel.hooks.afterStep.tap({ name: PLUGIN_NAME, stage: Stage.REPORT }, (result) => {
      const run = result.context.run;
      const { saveEvery, steps, logRollouts } = trainer();
      if (logRollouts > 0) appendRollouts(path.join(run.runDir, 'rollouts.jsonl'), result.step, result.batch, logRollouts);
      const due = (saveEvery > 0 && result.step % saveEvery === 0) || result.step === steps || run.signal.aborted;
      if (due) this.pendingSave = { step: result.step, run };
    });

    kernel.hooks.failed.tap(PLUGIN_NAME, () => { this.failed = true; });
    kernel.hooks.shutdown.tapPromise(PLUGIN_NAME, async () => {
      try {
        await savePending();
      } finally {
        this.groups.dispose();
      }
    });
  }
}

/** The plugin module's default export: `plugins: ['trainer']`. */
export default function trainerPlugin(): TrainerPlugin {
  return new TrainerPlugin();
}
