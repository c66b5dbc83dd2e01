import path from 'node:path';
import {
  AUTO_BACKEND,
  BatchInputSource,
  DrmasError,
  didYouMean,
  Engines,
  rolloutEngineKey,
  rolloutEngineName,
  Checkpointable,
  InfoSection,
  LossFunction,
  RunFile,
  SeededRng,
  Stage,
  WorkerGroups,
  z,
  type Kernel,
  type Plugin,
  type RegisterContext,
  type ResolvedConfig,
  type RunContext,
  type Metrics,
  type StepContext,
  type TrainingBatch,
  type ValueLossFunction,
  type WorkerGroupBatch,
} from '@drmas/core';
import { restoreCheckpoint, saveCheckpoint } from './Checkpoints.js';
import { appendRollouts } from './RolloutLog.js';
import { batchMetrics } from './stepMetrics.js';
import {
  agentDiagnosticsSettings,
  measuresInflationAt,
  optimizerSection,
  spikeGuardSection,
  trainerSection,
  trainOverridesSection,
  type SpikeGuardSettings,
  type TrainerSection,
} from './config/trainingConfig.js';
import { SpikeGuards } from './spikeGuard/GradNormSpikeGuard.js';
import { agentRewardMetrics, diagnoseAgentRewards, type AgentRewardDiagnosis } from './agentDiagnostics/agentRewardStatistics.js';
import { LearningRateSchedule } from './optimizer/LearningRateSchedule.js';
import { describeAutoTraining, describeRolloutSetting } from './rolloutEngine.js';
import { updateWorkerGroup, type WorkerGroupUpdate } from './updateWorkerGroup.js';
import { bestAgainstWorst } from './preference/onlinePairs.js';
import { WorkerGroupsService, type TrainedWorkerGroup } from './WorkerGroupsService.js';
import { planWorkerGroups } from './workerGroupPlan.js';
import { ClippedValueLoss } from '@drmas/plugin-algorithms';
import { criticSection, criticSettings } from './config/criticConfig.js';
import { loraSection, type LoraSection } from './config/loraConfig.js';
import { Critics } from './critic/Critics.js';
import { checkCritics } from './critic/checkCritics.js';
import { BUILTIN_CRITIC_LEARNERS, CriticLearner } from './critic/CriticLearner.js';
import { describeMixer } from './mixer/TeamMixer.js';
import { checkHappoOrder, describeHappo, happoOrderAt, happoRoles } from './happo/happoOrder.js';
import { happoUpdate } from './happo/happoUpdate.js';
import { roleSwapModels, swappedAt } from './roleSwap/roleSwap.js';

const PLUGIN_NAME = 'trainer';

/** The group's rows less those of frozen agents (`trainable: false`), which never reach the loss. */
function withoutFrozenRows(view: WorkerGroupBatch, frozen: readonly string[]): WorkerGroupBatch {
  if (frozen.length === 0) return view;
  const { names, codes } = view.batch.ids.agent;
  const rows = view.rows.filter((row) => !frozen.includes(names[codes[row]!]!));
  return { ...view, rows, agentIds: view.agentIds.filter((agent) => !frozen.includes(agent)) };
}

/** `drmas info`'s note on a worker group whose role takes part in `trainer.roleSwap`. */
function describeRoleSwap(config: ResolvedConfig, agents: readonly string[]): { roleSwap?: string } {
  const swap = (config.trainer as typeof config.trainer & TrainerSection).roleSwap;
  const role = swap?.roles.find((r) => agents.includes(r));
  if (!swap || role === undefined) return {};
  const other = swap.roles.find((r) => r !== role)!;
  return { roleSwap: `plays ${other} instead of ${role} every other ${swap.swapEvery} steps (CORY's role exchange)` };
}

/** `drmas info`'s note on a LoRA agent's group. */
function describeLora(model: string, lora: LoraSection): string {
  const dropout = lora.dropout > 0 ? `, dropout ${lora.dropout}` : '';
  const start = lora.adapter ? `, starting from ${lora.adapter}` : '';
  return `adapter r=${lora.rank} alpha=${lora.alpha}${dropout} on ${lora.targetModules.join(', ')} over model ${model}'s frozen base${start}`;
}

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
    trainer: trainerSection,
    models: z.strictObject({ optimizer: optimizerSection.prefault({}), spikeGuard: spikeGuardSection.optional() }),
    agents: z.strictObject({
      train: trainOverridesSection.optional(),
      /** false: the agent samples but is never trained (its rows leave the loss). Default true. */
      trainable: z.boolean().optional(),
      /** Train a LoRA adapter of the agent's own on its model (a frozen base shared with the other agents on it). */
      lora: loraSection.optional(),
    }),
    critic: criticSection,
  };
  readonly configPaths = ['critic.model', 'agents.*.lora.adapter'];
  private readonly critics = new Critics();
  private stepStarted = 0;
  /** The step whose checkpoint is due; written once that step's metrics line is out (next beforeStep or shutdown). */
  private pendingSave: { step: number; run: RunContext } | undefined;
  private failed = false;
  /** The training step whose HAPPO update has run (at its first worker group's `update` call). */
  private happoDoneAt = 0;
  /**
   * The critics' value loss, made once: a backend may build a graph per loss (onnx does, and a new loss at every step
   * built a session at every step and kept them all, 150 MB a step on the math job's IPPO).
   */
  private valueLoss: ValueLossFunction | undefined;

  /** The worker groups' gradient-norm spike guards, by model id (none unless a model sets `spikeGuard`). */
  private spikeGuards: SpikeGuards | undefined;
  /** `trainer.agentDiagnostics`' statistics of the step's batch, shared by its worker groups' updates. */
  private readonly diagnoses = new WeakMap<TrainingBatch, AgentRewardDiagnosis>();

  /**
   * The batch's per-agent reward statistics (`trainer.agentDiagnostics`), taken once per step and put in its metrics
   * (`agent/<role>/reward_mean` is the step metrics' own, over all the agent's turns).
   */
  private agentDiagnosis(batch: TrainingBatch, metrics: Metrics): AgentRewardDiagnosis {
    let diagnosis = this.diagnoses.get(batch);
    if (diagnosis) return diagnosis;
    diagnosis = diagnoseAgentRewards(batch);
    this.diagnoses.set(batch, diagnosis);
    for (const agent of diagnosis.agents) Object.assign(metrics, agentRewardMetrics(agent));
    return diagnosis;
  }

  register(ctx: RegisterContext): void {
    const guarded = Object.entries(ctx.config.models).filter(([, model]) => model.spikeGuard !== undefined);
    if (guarded.length) {
      this.spikeGuards = new SpikeGuards(new Map(guarded.map(([id, model]) => [id, model.spikeGuard as SpikeGuardSettings])));
      ctx.bind(Checkpointable).toConstantValue(this.spikeGuards);
    }
    ctx.bind(WorkerGroupsService).toSelf().inSingletonScope();
    ctx.bind(WorkerGroups).toService(WorkerGroupsService);
    ctx.bind(RunFile).toConstantValue({ path: 'rollouts.jsonl', kind: 'steps' });
    for (const [name, learner] of Object.entries(BUILTIN_CRITIC_LEARNERS)) ctx.provide(CriticLearner, name, learner);
    if (criticSettings(ctx.config).learner !== undefined) {
      ctx.provide(BatchInputSource, 'values', { fill: (batch, step) => this.critics.fill(batch, step.metrics) });
      ctx.bind(InfoSection).toConstantValue({
        title: 'critics',
        describe: () =>
          this.critics.plans.map((plan) => ({
            id: plan.id,
            learner: plan.learner,
            agents: plan.agents,
            input: plan.joint ? "joint context (every agent's turns so far)" : 'own turns',
            policyUpdate:
              plan.kind.policyUpdate === 'sequential' ? describeHappo(criticSettings(ctx.config).happo) : 'every worker group at once',
            ...describeMixer(plan.kind.credit, criticSettings(ctx.config).mixer),
            trunk: plan.shareTrunk ? `shared with ${plan.policyGroup}` : plan.settings.model,
            backend: plan.settings.backend,
            lr: plan.training.optimizer.lr,
            epochs: plan.training.epochs,
            miniBatches: plan.training.miniBatches,
          })),
      });
    }
    const diagnostics = agentDiagnosticsSettings(ctx.config.trainer as typeof ctx.config.trainer & TrainerSection);
    if (diagnostics) {
      const every = diagnostics.inflationEvery;
      ctx.bind(InfoSection).toConstantValue({
        title: 'agentDiagnostics',
        describe: () => ({
          metrics:
            'agent/<role>/{grad_norm,grad_norm_max,reward_std,inflation_predicted,inflation_advantages,constant_share,inflation_measured}',
          cost: `two extra forward and backward passes per worker group ${every === 1 ? 'at every step' : `at steps 1, ${1 + every}, ${1 + 2 * every}, ...`} (inflation_measured)`,
        }),
      });
    }
    ctx.bind(InfoSection).toConstantValue({
      title: 'workerGroups',
      describe: (kernel) => {
        const engines = kernel.get(Engines);
        return planWorkerGroups(kernel.config).map((plan) => ({
          id: plan.id,
          agents: plan.agents,
          backend:
            plan.settings.backend === AUTO_BACKEND
              ? describeAutoTraining(engines, plan.settings)
              : engines.describe(plan.settings.backend, plan.settings),
          rollout: describeRolloutSetting(engines, plan.settings),
          model: plan.settings.model,
          architecture: plan.settings.architecture ?? '(from checkpoint)',
          runtime: plan.settings.runtime,
          ...(plan.frozenAgents.length ? { frozen: plan.frozenAgents } : {}),
          ...(plan.lora ? { lora: describeLora(plan.model, plan.lora) } : {}),
          ...(plan.settings.spikeGuard ? { spikeGuard: (plan.settings.spikeGuard as SpikeGuardSettings).action } : {}),
          ...describeRoleSwap(kernel.config, plan.agents),
          lr: plan.training.optimizer.lr,
          schedule: plan.training.schedule.kind,
          microBatchSize: plan.training.microBatchSize,
        }));
      },
    });
  }

  apply(kernel: Kernel): void {
    const trainer = () => kernel.config.trainer as typeof kernel.config.trainer & TrainerSection;
    const groups = () => kernel.get(WorkerGroupsService);

    // Agents on undefined models, or sharing a model with different training settings, are config errors: found
    // here rather than when setup loads the models.
    kernel.hooks.validate.tap(PLUGIN_NAME, (config) => {
      const engines = kernel.get(Engines);
      for (const plan of planWorkerGroups(config)) {
        if (plan.settings.backend !== AUTO_BACKEND) engines.get(plan.settings.backend, `models.${plan.model}.backend`);
        const rollout = rolloutEngineName(plan.settings.rollout);
        if (typeof plan.settings.rollout === 'object' && !engines.names().includes(rollout!)) {
          throw new DrmasError('UNKNOWN_NAME', `no rollout engine "${rollout}" is registered for a server`, {
            key: rolloutEngineKey(plan.model, plan.settings.rollout),
            hint: `the vllm and sglang engines come with the plugin rollout-remote: add "rollout-remote" to plugins${didYouMean(rollout!, engines.names())}`,
          });
        }
        if (rollout !== undefined && rollout !== AUTO_BACKEND) engines.get(rollout, rolloutEngineKey(plan.model, plan.settings.rollout));
      }
      checkCritics(kernel, config, this.critics);
      const critic = criticSettings(config);
      if (this.critics.learner?.policyUpdate === 'sequential') {
        checkHappoOrder(critic.happo, happoRoles(config));
        // Online DPO trains on pairs of rows, which HAPPO's per-role advantages do not weigh.
        if ((config.algorithm as { dpo?: unknown }).dpo !== undefined) {
          throw new DrmasError('CONFIG_INVALID', 'critic.learner happo scales advantages, which online DPO (algorithm.dpo) does not read', {
            key: 'critic.learner',
            hint: 'remove algorithm.dpo to train HAPPO with the PPO loss, or use another critic.learner',
          });
        }
      }
      const swap = (config.trainer as typeof config.trainer & TrainerSection).roleSwap;
      if (swap) roleSwapModels(config, swap);
    });

    kernel.hooks.setup.tapPromise({ name: PLUGIN_NAME, stage: Stage.MODEL }, async (run) => {
      const loss = kernel.getAll(LossFunction)[0];
      await groups().create(run, {
        reference: (loss?.needsReference ?? false) && loss?.referencePolicy !== 'current',
        criticGroups: new Set(this.critics.plans.map((plan) => plan.policyGroup)),
      });
      await this.critics.create(
        run,
        kernel.get(Engines),
        groups(),
        kernel.config.trainer.seed,
        (id) => groups().get(id).engine,
        criticSettings(kernel.config),
      );
    });
    kernel.hooks.setup.tapPromise({ name: PLUGIN_NAME, stage: Stage.OBSERVE }, async (run) => {
      if (!run.resumeFrom) return;
      const state = await restoreCheckpoint(run.resumeFrom, groups().all(), kernel.getAll(Checkpointable));
      await this.critics.load(run.resumeFrom);
      run.log(`restored step ${state.step} from ${run.resumeFrom}`);
    });

    const savePending = async () => {
      const pending = this.pendingSave;
      this.pendingSave = undefined;
      if (!pending || this.failed || groups().all().length === 0) return;
      const { keepLast, seed } = trainer();
      const dir = await saveCheckpoint(
        pending.run.runDir,
        pending.step,
        seed,
        groups().all(),
        kernel.getAll(Checkpointable),
        keepLast,
        (partial) => this.critics.save(partial),
      );
      pending.run.log(`checkpoint ${dir}`);
    };

    kernel.hooks.beforeStep.tapPromise({ name: PLUGIN_NAME, stage: Stage.FIRST }, async (step) => {
      await savePending();
      this.stepStarted = performance.now();
      const swap = trainer().roleSwap;
      if (!swap) return;
      // A function of the step alone, so a resumed run plays each role on the model the uninterrupted run would.
      const swapped = swappedAt(step.step, swap.swapEvery);
      groups().swapRoles(swap.roles, swapped);
      step.metrics['roleSwap/swapped'] = swapped ? 1 : 0;
      if (step.step > 1 && swapped !== swappedAt(step.step - 1, swap.swapEvery)) {
        const [a, b] = swap.roles;
        const [modelA, modelB] = roleSwapModels(kernel.config, swap);
        step.run.log(
          `step ${step.step}: ${a} now plays on model ${swapped ? modelB : modelA} and ${b} on model ${swapped ? modelA : modelB} (trainer.roleSwap)`,
        );
      }
    });

    const updateOptions = (group: TrainedWorkerGroup, step: StepContext, rngLabel: string, batch: TrainingBatch): WorkerGroupUpdate => {
      const { seed, steps } = kernel.config.trainer;
      const guard = this.spikeGuards?.of(group.id);
      const diagnostics = agentDiagnosticsSettings(trainer());
      const schedule = new LearningRateSchedule(group.training.schedule.kind, group.training.schedule.warmupSteps, steps);
      return {
        loss: kernel.get(LossFunction, { key: 'algorithm.loss' }),
        rng: new SeededRng(seed).fork(`update/${step.step}/${rngLabel}`),
        metrics: step.metrics,
        distributions: step.distributions,
        lrScale: schedule.scaleAt(step.step - 1),
        oldLogProbs: trainer().oldLogProbs,
        spikeGuard: guard && { guard, log: (line: string) => step.run.log(line), step: step.step },
        ...(diagnostics && {
          agentDiagnosis: this.agentDiagnosis(batch, step.metrics),
          measureInflation: measuresInflationAt(diagnostics, step.step),
        }),
      };
    };

    kernel.hooks.update.tapPromise(PLUGIN_NAME, async (view, step) => {
      const critic = criticSettings(kernel.config);
      if (this.critics.learner?.policyUpdate === 'sequential') {
        // HAPPO orders roles across worker groups: the first group's call updates them all, the others find it done.
        if (this.happoDoneAt === step.step) return;
        this.happoDoneAt = step.step;
        await happoUpdate(view.batch, {
          order: happoOrderAt(critic.happo, happoRoles(kernel.config), kernel.config.trainer.seed, step.step),
          settings: critic.happo,
          groupOf: (role) => groups().forAgent(role),
          metrics: step.metrics,
          updateOptions: (group, role) => updateOptions(group, step, role, view.batch),
          oldLogProbs: trainer().oldLogProbs,
        });
        return;
      }
      const group = groups().get(view.workerGroupId);
      const trained = withoutFrozenRows(view, group.frozenAgents);
      if (group.frozenAgents.length) step.metrics[`actor/${group.id}/frozen_rows`] = view.rows.length - trained.rows.length;
      if (trained.rows.length === 0) return;
      const loss = kernel.get(LossFunction, { key: 'algorithm.loss' });
      let rows = trained;
      if (loss.pairedRows) {
        // Online DPO: the group trains on pairs of its own rollouts, best against worst.
        const online = bestAgainstWorst(trained, group.id);
        step.metrics[`actor/${group.id}/dpo_pairs`] = online.pairs;
        step.metrics[`actor/${group.id}/dpo_ties`] = online.ties;
        if (!online.view) return;
        rows = online.view;
      }
      await updateWorkerGroup(group, rows, { ...updateOptions(group, step, group.id, view.batch), loss });
    });

    // After the estimators (which read the values) and their statistics: veRL updates the critic before the actor.
    kernel.hooks.advantage.tapPromise({ name: PLUGIN_NAME, stage: Stage.LAST }, async (batch, step) => {
      if (this.critics.all.length === 0) return;
      const critic = criticSettings(kernel.config);
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

    // First, so that every other afterStep tap (a user's at the default stage included) reads the batch statistics.
    kernel.hooks.afterStep.tap({ name: PLUGIN_NAME, stage: Stage.FIRST }, (result) => {
      Object.assign(result.metrics, batchMetrics(result.batch, (performance.now() - this.stepStarted) / 1000));
    });

    kernel.hooks.afterStep.tap({ name: PLUGIN_NAME, stage: Stage.REPORT }, (result) => {
      const run = result.context.run;
      const { saveEvery, steps, logRollouts } = trainer();
      if (logRollouts > 0) appendRollouts(path.join(run.runDir, 'rollouts.jsonl'), result.step, result.batch, logRollouts);
      const due = (saveEvery > 0 && result.step % saveEvery === 0) || result.step === steps || run.signal.aborted;
      if (due) this.pendingSave = { step: result.step, run };
    });

    kernel.hooks.failed.tap(PLUGIN_NAME, () => {
      this.failed = true;
    });
    kernel.hooks.shutdown.tapPromise(PLUGIN_NAME, async () => {
      try {
        await savePending();
      } finally {
        this.critics.dispose();
        groups().dispose();
      }
    });
  }
}

/** The plugin module's default export: `plugins: ['trainer']`. */
export default function trainerPlugin(): TrainerPlugin {
  return new TrainerPlugin();
}
