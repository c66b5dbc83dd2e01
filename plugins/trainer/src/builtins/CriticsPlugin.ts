import {
  BatchInputSource,
  Engines,
  InfoSection,
  SeededRng,
  Stage,
  type ApplyContext,
  type RegisterContext,
  type ValueLossFunction,
} from '@drmas/core';
import { ClippedValueLoss } from '@drmas/plugin-algorithms';
import type { TrainerConfig } from '../config/trainerSchema.js';
import { checkCritics } from '../critic/checkCritics.js';
import type { Critics } from '../critic/Critics.js';
import { describeHappo } from '../happo/happoOrder.js';
import { describeMixer } from '../mixer/TeamMixer.js';
import { LearningRateSchedule } from '../optimizer/LearningRateSchedule.js';
import type { WorkerGroupsService } from '../WorkerGroupsService.js';
import type { TrainerBuiltin } from './TrainerBuiltin.js';

const PLUGIN_NAME = 'trainer:critics';

/**
 * The value learners of `critic.learner`: planned at `validate` (which roles' rows each critic values), made after
 * the worker groups at setup, their values filled into the batch for the estimator (the `values` input), then their
 * optimizer steps at `advantage` after the estimators (veRL's order: critic, then actor).
 */
export class CriticsPlugin implements TrainerBuiltin {
  readonly name = PLUGIN_NAME;
  /**
   * The critics' value loss, made once: a backend may build a graph per loss (onnx does, and a new loss at every step
   * built a session at every step and kept them all, 150 MB a step on the math job's IPPO).
   */
  private valueLoss: ValueLossFunction | undefined;

  constructor(
    private readonly critics: Critics,
    private readonly groups: () => WorkerGroupsService,
  ) {}

  register(ctx: RegisterContext<TrainerConfig>): void {
    ctx.provide(BatchInputSource, 'values', { fill: (batch, step) => this.critics.fill(batch, step.metrics) });
    ctx.bind(InfoSection).toConstantValue({
      title: 'critics',
      describe: () =>
        this.critics.plans.map((plan) => ({
          id: plan.id,
          learner: plan.learner,
          agents: plan.agents,
          input: plan.joint ? "joint context (every agent's turns so far)" : 'own turns',
          policyUpdate: plan.kind.policyUpdate === 'sequential' ? describeHappo(ctx.config.critic.happo) : 'every worker group at once',
          ...describeMixer(plan.kind.credit, ctx.config.critic.mixer),
          trunk: plan.shareTrunk ? `shared with ${plan.policyGroup}` : plan.settings.model,
          backend: plan.settings.backend,
          lr: plan.training.optimizer.lr,
          epochs: plan.training.epochs,
          miniBatches: plan.training.miniBatches,
        })),
    });
  }

  apply(kernel: ApplyContext<TrainerConfig>): void {
    const services = kernel.inject({ engines: Engines });
    kernel.hooks.validate.tap(PLUGIN_NAME, (config) => checkCritics(kernel, services.engines, config, this.critics));
    kernel.hooks.setup.tapPromise({ name: PLUGIN_NAME, stage: Stage.MODEL }, async (run) => {
      await this.critics.create(
        run,
        services.engines,
        this.groups(),
        kernel.config.trainer.seed,
        (id) => this.groups().get(id).engine,
        kernel.config.critic,
      );
    });
    // After the estimators (which read the values) and their statistics: veRL updates the critic before the actor.
    kernel.hooks.advantage.tapPromise({ name: PLUGIN_NAME, stage: Stage.LAST }, async (batch, step) => {
      if (this.critics.all.length === 0) return;
      const critic = kernel.config.critic;
      await this.critics.update(batch, {
        rng: (id) => new SeededRng(kernel.config.trainer.seed).fork(`critic/${step.step}/${id}`),
        loss: (this.valueLoss ??= new ClippedValueLoss({ clipRange: critic.clipRange, aggregation: critic.aggregation })),
        lrScale: new LearningRateSchedule(critic.optimizer.schedule, critic.optimizer.warmupSteps, kernel.config.trainer.steps).scaleAt(
          step.step - 1,
        ),
        metrics: step.metrics,
        step: step.step,
        log: (line) => step.run.log(line),
      });
    });
  }
}
