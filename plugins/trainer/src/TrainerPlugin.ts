import {
  allOf,
  AUTO_BACKEND,
  DrmasError,
  didYouMean,
  Engines,
  rolloutEngineKey,
  rolloutEngineName,
  InfoSection,
  LossFunction,
  Stage,
  WorkerGroups,
  type ApplyContext,
  type Injected,
  type Plugin,
  type RegisterContext,
} from '@drmas/core';
import { agentDiagnosticsSettings, type SpikeGuardSettings } from './config/trainingConfig.js';
import { trainerSchema, type TrainerConfig } from './config/trainerSchema.js';
import { describeAutoTraining, describeRolloutSetting } from './rolloutEngine.js';
import { WorkerGroupsService } from './WorkerGroupsService.js';
import { checkCurrentRatio, planWorkerGroups } from './workerGroupPlan.js';
import { type LoraSection } from './config/loraConfig.js';
import { Critics } from './critic/Critics.js';
import { BUILTIN_CRITIC_LEARNERS, CriticLearner } from './critic/CriticLearner.js';
import { trainerBuiltins, type TrainerBuiltins } from './builtins/trainerBuiltins.js';

const PLUGIN_NAME = 'trainer';

/** What the trainer's own taps use: its worker groups, the engine service, and the loss (absent without the algorithms plugin). */
const TRAINER_SERVICES = { groups: WorkerGroupsService, engines: Engines, losses: allOf(LossFunction) };
type TrainerServices = Injected<typeof TRAINER_SERVICES>;

/** `drmas info`'s note on a worker group whose role takes part in `trainer.roleSwap`. */
function describeRoleSwap(config: TrainerConfig, agents: readonly string[]): { roleSwap?: string } {
  const swap = config.trainer.roleSwap;
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
 * The training side of the loop: worker groups from `models`/`agents` (checked at validate, made at setup, disposed
 * at shutdown), and the trainer's features as built-in plugins chosen from the config (`trainerBuiltins`): the policy
 * update of each worker group, critics, HAPPO's sequential update phase, the spike guards, CORY's role swap,
 * rollouts.jsonl, checkpoints and resume, and the step metrics.
 */
export class TrainerPlugin implements Plugin<unknown, typeof trainerSchema> {
  readonly name = PLUGIN_NAME;
  readonly configSchema = trainerSchema;
  readonly configPaths = ['critic.model', 'agents.*.lora.adapter'];
  private readonly critics = new Critics();
  /** The services the trainer's taps use, injected at `apply`. */
  private services: TrainerServices | undefined;
  /** The built-ins the config chose, at `register`. */
  private builtins: TrainerBuiltins | undefined;

  register(ctx: RegisterContext<TrainerConfig>): void {
    ctx.bind(WorkerGroupsService).toSelf().inSingletonScope();
    ctx.bind(WorkerGroups).toService(WorkerGroupsService);
    for (const [name, learner] of Object.entries(BUILTIN_CRITIC_LEARNERS)) ctx.provide(CriticLearner, name, learner);
    this.builtins = trainerBuiltins(ctx.config, { groups: () => this.groups(), critics: this.critics });
    for (const builtin of this.builtins.plugins) builtin.register?.(ctx);
    const diagnostics = agentDiagnosticsSettings(ctx.config.trainer);
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
        const engines = this.injected().engines;
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
          ...describeRoleSwap(ctx.config, plan.agents),
          lr: plan.training.optimizer.lr,
          schedule: plan.training.schedule.kind,
          microBatchSize: plan.training.microBatchSize,
        }));
      },
    });
  }

  apply(kernel: ApplyContext<TrainerConfig>): void {
    const services = kernel.inject(TRAINER_SERVICES);
    this.services = services;
    // Agents on undefined models, or sharing a model with different training settings, are config errors: found
    // here rather than when setup loads the models.
    kernel.hooks.validate.tap(PLUGIN_NAME, (config) => {
      const { engines } = services;
      for (const plan of planWorkerGroups(config)) {
        if (config.trainer.oldLogProbs === 'current') checkCurrentRatio(plan);
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
    });
    kernel.hooks.setup.tapPromise({ name: PLUGIN_NAME, stage: Stage.MODEL }, async (run) => {
      const loss = services.losses[0];
      await this.groups().create(run, {
        reference: (loss?.needsReference ?? false) && loss?.referencePolicy !== 'current',
        criticGroups: new Set(this.critics.plans.map((plan) => plan.policyGroup)),
      });
    });
    const builtins = this.builtins;
    if (!builtins) throw new Error(`plugin "${PLUGIN_NAME}" applied before it was registered`);
    for (const builtin of builtins.plugins) builtin.apply?.(kernel);
    kernel.hooks.shutdown.tapPromise(PLUGIN_NAME, async () => {
      try {
        await builtins.checkpoints.flush();
      } finally {
        this.critics.dispose();
        this.groups().dispose();
      }
    });
  }

  private groups(): WorkerGroupsService {
    return this.injected().groups;
  }

  private injected(): TrainerServices {
    if (!this.services) throw new Error(`plugin "${PLUGIN_NAME}" used before the kernel applied it`);
    return this.services;
  }
}

/** The plugin module's default export: `plugins: ['trainer']`. */
export default function trainerPlugin(): TrainerPlugin {
  return new TrainerPlugin();
}
