import { allOf, Checkpointable, Stage, type ApplyContext, type Injected, type RunContext } from '@drmas/core';
import { restoreCheckpoint, saveCheckpoint } from '../Checkpoints.js';
import type { TrainerConfig } from '../config/trainerSchema.js';
import type { Critics } from '../critic/Critics.js';
import type { WorkerGroupsService } from '../WorkerGroupsService.js';
import type { TrainerBuiltin } from './TrainerBuiltin.js';

const PLUGIN_NAME = 'trainer:checkpoints';
const SERVICES = { checkpointables: allOf(Checkpointable) };

/**
 * Atomic checkpoints every `trainer.saveEvery` steps, at the end and on SIGINT, and exact resume from `--resume`. A
 * step's checkpoint is written after its metrics line (at the next `beforeStep`, or by `flush` at shutdown), so a
 * resumed run never lacks a line before its checkpoint; a failed run saves nothing, since its worker groups may be
 * half updated.
 */
export class CheckpointsPlugin implements TrainerBuiltin {
  readonly name = PLUGIN_NAME;
  /** The step whose checkpoint is due; written once that step's metrics line is out (next beforeStep or shutdown). */
  private pending: { step: number; run: RunContext } | undefined;
  private failed = false;
  private applied: { config: () => TrainerConfig; services: Injected<typeof SERVICES> } | undefined;

  constructor(
    private readonly groups: () => WorkerGroupsService,
    private readonly critics: Critics,
  ) {}

  apply(kernel: ApplyContext<TrainerConfig>): void {
    const services = kernel.inject(SERVICES);
    this.applied = { config: () => kernel.config, services };
    kernel.hooks.setup.tapPromise({ name: PLUGIN_NAME, stage: Stage.OBSERVE }, async (run) => {
      if (!run.resumeFrom) return;
      const state = await restoreCheckpoint(run.resumeFrom, this.groups().all(), services.checkpointables);
      await this.critics.load(run.resumeFrom);
      run.log(`restored step ${state.step} from ${run.resumeFrom}`);
    });
    kernel.hooks.beforeStep.tapPromise({ name: PLUGIN_NAME, stage: Stage.FIRST }, () => this.flush());
    kernel.hooks.afterStep.tap({ name: PLUGIN_NAME, stage: Stage.REPORT }, (result) => {
      const run = result.context.run;
      const { saveEvery, steps } = kernel.config.trainer;
      const due = (saveEvery > 0 && result.step % saveEvery === 0) || result.step === steps || run.signal.aborted;
      if (due) this.pending = { step: result.step, run };
    });
    kernel.hooks.failed.tap(PLUGIN_NAME, () => {
      this.failed = true;
    });
  }

  /** Writes the due checkpoint, if any (the trainer calls it at shutdown, before the worker groups go). */
  async flush(): Promise<void> {
    const pending = this.pending;
    this.pending = undefined;
    const groups = this.groups();
    if (!pending || this.failed || !this.applied || groups.all().length === 0) return;
    const { keepLast, seed } = this.applied.config().trainer;
    const dir = await saveCheckpoint(
      pending.run.runDir,
      pending.step,
      seed,
      groups.all(),
      this.applied.services.checkpointables,
      keepLast,
      (partial) => this.critics.save(partial),
    );
    pending.run.log(`checkpoint ${dir}`);
  }
}
