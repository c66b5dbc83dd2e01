import {
  AdvantageEstimator,
  Checkpointable,
  DrmasError,
  InfoSection,
  LossFunction,
  Stage,
  type ApplyContext,
  type Plugin,
  type RegisterContext,
  Rollouts,
  type RolloutBatch,
  type StepContext,
} from '@drmas/core';
import { ADVANTAGE_ESTIMATORS } from '../estimators/builtinEstimators.js';
import { GROUPING_OPTIONS, NUMERIC_OPTIONS } from '../estimators/advantageOptions.js';
import type { EstimatorDefinition } from '../estimators/types.js';
import { DynamicSamplingAccumulator } from '../sampling/dynamicSampling.js';
import { algorithmsSchema, type AdvantageOptionsSettings, type AlgorithmsConfig, type AlgorithmSettings } from './algorithmConfig.js';
import type { BatchAdvantageOptions } from '../computeAdvantage.js';
import { PolicyLossFunction } from '../losses/ppoClipLoss.js';
import { DpoLossFunction } from '../losses/dpoLoss.js';
import { BatchEstimator, reportAdvantages } from './BatchEstimator.js';

const PLUGIN_NAME = 'algorithms';

/**
 * Reads `algorithm.loss` into the loss settings: each clip bound defaults to `clipRatio`, the aggregation to
 * `token-mean` (`seq-mean-token-mean` for gspo, as veRL's GSPO aggregates).
 */
export function lossSettings(settings: AlgorithmSettings): PolicyLossFunction['settings'] {
  const loss = settings.loss;
  return {
    variant: loss.variant,
    clipRatioLow: loss.clipRatioLow ?? loss.clipRatio,
    clipRatioHigh: loss.clipRatioHigh ?? loss.clipRatio,
    clipRatioC: loss.clipRatioC,
    aggregation: loss.aggregation ?? (loss.variant === 'gspo' ? 'seq-mean-token-mean' : 'token-mean'),
    lossScaleFactor: loss.lossScaleFactor,
    klCoef: loss.klCoef,
    klType: loss.klType,
    entropyCoef: loss.entropyCoef,
  };
}

/**
 * Drops groups whose episode outcomes are all equal and asks the kernel's `Rollouts` for more rounds until the batch
 * has as many groups as the first round had (DAPO dynamic sampling), for at most `dynamicSampling.maxRounds` rounds.
 */
async function dynamicSampling(
  settings: AlgorithmSettings,
  rollouts: Rollouts,
  first: RolloutBatch,
  step: StepContext,
): Promise<RolloutBatch> {
  const targetGroups = new Set(first.trajectories.map((t) => t.groupId)).size;
  if (targetGroups === 0) return first;
  const accumulator = new DynamicSamplingAccumulator({
    targetGroups,
    maxRounds: settings.dynamicSampling.maxRounds,
    keepSingletonGroups: true,
  });
  const rounds: RolloutBatch[] = [];
  let batch = first;
  for (;;) {
    rounds.push(batch);
    const status = accumulator.addRound(
      batch.trajectories.map((t) => t.outcome ?? 0),
      batch.trajectories.map((t) => t.groupId),
    );
    if (status !== 'need-more') break;
    batch = await rollouts.next(step);
  }
  const result = accumulator.result();
  const trajectories = result.rowsByRound.flatMap((rows, round) => rows.map((r) => rounds[round]!.trajectories[r]!));
  step.metrics['rollout/dynamic_sampling_rounds'] = result.rounds;
  step.metrics['rollout/dynamic_sampling_groups'] = result.groups.length;
  if (result.gaveUp) {
    step.run.log(
      `warning: dynamic sampling gave up after ${result.rounds} rounds with ${result.groups.length} of ${targetGroups} groups ` +
        'having reward variance; training on what it has (raise algorithm.dynamicSampling.maxRounds, or the task is too easy/hard)',
    );
  }
  return { trajectories, metrics: { ...first.metrics } };
}

/** Refuses options that the estimator would ignore: grouping options for one that does not group, a statistics unit for one without. */
function checkOptionsApply(
  definition: EstimatorDefinition,
  options: Pick<AdvantageOptionsSettings, 'groupKey' | 'excludeZeroStdGroups' | 'statisticsUnit'>,
  prefix: string,
): void {
  const refuse = (key: string, message: string, hint: string) => {
    throw new DrmasError('CONFIG_INVALID', message, { key: `${prefix}.${key}`, hint });
  };
  if (definition.defaultGroupKey === undefined) {
    for (const key of ['groupKey', 'excludeZeroStdGroups'] as const) {
      if (options[key] === undefined || options[key] === false) continue;
      refuse(
        key,
        `${prefix}.${key} applies to estimators that normalize within groups; "${definition.name}" does not group rows`,
        'remove it, or choose a group-based estimator such as drmas or grpo',
      );
    }
  }
  if (options.statisticsUnit !== undefined && definition.defaultStatisticsUnit === undefined) {
    refuse(
      'statisticsUnit',
      `${prefix}.statisticsUnit applies to estimators that take a mean and std over a group's samples; "${definition.name}" does not`,
      'remove it, or choose grpo or drmas (the unit and the group key are independent options of both)',
    );
  }
}

function definedOnly(options: object | undefined): Record<string, unknown> {
  return Object.fromEntries(Object.entries(options ?? {}).filter(([, value]) => value !== undefined));
}

/**
 * The options of one role's rows (`undefined`: `algorithm.advantage`'s rows): `algorithm`'s, then the role's
 * `advantageOptions`. A role whose `advantage` names an estimator of its own does not inherit `algorithm`'s grouping
 * options, which belong to `algorithm.advantage`.
 */
export function roleOptions(config: AlgorithmsConfig, role: string | undefined): BatchAdvantageOptions {
  const s: AlgorithmSettings = config.algorithm;
  const pick = (keys: readonly string[]) => Object.fromEntries(keys.map((key) => [key, s[key as keyof AlgorithmSettings]]));
  const entry = role === undefined ? undefined : config.agents[role];
  const ownEstimator = entry?.advantage !== undefined && entry.advantage !== s.advantage;
  return {
    ...pick(NUMERIC_OPTIONS),
    ...(ownEstimator ? {} : pick(GROUPING_OPTIONS)),
    ...definedOnly(entry?.advantageOptions),
  };
}

/** Every estimator name the config chooses: `algorithm.advantage` and the roles' `advantage`. */
function chosenEstimators(config: AlgorithmsConfig): Set<string> {
  const names = Object.values(config.agents).map((agent) => agent.advantage);
  return new Set([config.algorithm.advantage, ...names].filter((name): name is string => name !== undefined));
}

/** The chosen stateful estimators' states (RAE's baselines) in checkpoints, so a resumed run continues exactly. */
function estimatorStates(estimators: BatchEstimator[]): Checkpointable {
  return {
    key: 'algorithms/estimators',
    getState: () => Object.fromEntries(estimators.map((estimator) => [estimator.name, estimator.state!.getState()])),
    setState: (state) => {
      const saved = (state ?? {}) as Record<string, unknown>;
      for (const estimator of estimators) if (estimator.name in saved) estimator.state!.setState(saved[estimator.name]);
    },
  };
}

/** What `drmas info` shows: the estimator of each role's rows and the options it runs with. */
function advantagePlan(config: AlgorithmsConfig): Array<Record<string, unknown>> {
  const fallback = config.algorithm.advantage;
  const rows = [{ rows: 'default', estimator: fallback ?? '(none)', ...definedOnly(roleOptions(config, undefined)) }];
  for (const [role, entry] of Object.entries(config.agents)) {
    if (entry.advantage === undefined && entry.advantageOptions === undefined) continue;
    rows.push({ rows: `agent ${role}`, estimator: entry.advantage ?? fallback ?? '(none)', ...definedOnly(roleOptions(config, role)) });
  }
  return rows;
}

/** The loss `drmas train` updates with: online DPO when `algorithm.dpo` is set, else the policy loss of `algorithm.loss`. */
function trainingLoss(settings: AlgorithmSettings): LossFunction {
  const dpo = settings.dpo;
  if (!dpo) return new PolicyLossFunction(lossSettings(settings));
  return new DpoLossFunction(
    { variant: dpo.loss, beta: dpo.beta, labelSmoothing: dpo.labelSmoothing },
    dpo.reference === 'rollout' ? 'current' : 'initial',
  );
}

/**
 * Provides every advantage estimator by name (chosen with `algorithm.advantage`, per role with
 * `agents.<role>.advantage` and `agents.<role>.advantageOptions`), the policy loss the trainers use
 * (`algorithm.loss`, or online DPO with `algorithm.dpo`), and DAPO dynamic sampling on `afterRollout`. After the
 * estimators (which mark the rows of zero-variance groups in `excludedRows` when configured to leave them out of the
 * loss), the step's advantage statistics are taken.
 */
export class AlgorithmsPlugin implements Plugin<unknown, typeof algorithmsSchema> {
  readonly name = PLUGIN_NAME;
  readonly configSchema = algorithmsSchema;
  private readonly estimators: BatchEstimator[] = [];

  register(ctx: RegisterContext<AlgorithmsConfig>): void {
    for (const definition of Object.values(ADVANTAGE_ESTIMATORS)) {
      const estimator = new BatchEstimator(definition, (role) => roleOptions(ctx.config, role));
      this.estimators.push(estimator);
      ctx.provide(AdvantageEstimator, definition.name, estimator);
    }
    ctx.bind(LossFunction).toDynamicValue(() => trainingLoss(ctx.config.algorithm));
    const stateful = this.estimators.filter(
      (estimator) => estimator.state !== undefined && chosenEstimators(ctx.config).has(estimator.name),
    );
    if (stateful.length) ctx.bind(Checkpointable).toConstantValue(estimatorStates(stateful));
    ctx.bind(InfoSection).toConstantValue({
      title: 'advantage',
      describe: () => advantagePlan(ctx.config),
    });
  }

  apply(kernel: ApplyContext<AlgorithmsConfig>): void {
    const services = kernel.inject({ rollouts: Rollouts });
    kernel.hooks.validate.tap(PLUGIN_NAME, () => {
      const { config } = kernel;
      const s: AlgorithmSettings = config.algorithm;
      const estimator = s.advantage ? kernel.getNamed(AdvantageEstimator, s.advantage, 'algorithm.advantage') : undefined;
      if (estimator instanceof BatchEstimator) checkOptionsApply(estimator.definition, s, 'algorithm');
      for (const [role, entry] of Object.entries(config.agents)) {
        const name = entry.advantage ?? s.advantage;
        if (name === undefined || entry.advantageOptions === undefined) continue;
        const own = kernel.getNamed(AdvantageEstimator, name, entry.advantage ? `agents.${role}.advantage` : 'algorithm.advantage');
        if (own instanceof BatchEstimator) checkOptionsApply(own.definition, entry.advantageOptions, `agents.${role}.advantageOptions`);
      }
    });
    const configured = kernel.config.algorithm.advantage !== undefined || Object.values(kernel.config.agents).some((a) => a.advantage);
    if (configured) {
      kernel.hooks.advantage.tap({ name: PLUGIN_NAME, stage: Stage.OBSERVE }, (batch, step) => {
        if (batch.rows === 0) return;
        reportAdvantages(batch, step);
      });
    }
    kernel.hooks.afterRollout.tapPromise({ name: PLUGIN_NAME, stage: Stage.FIRST }, async (batch, step) =>
      kernel.config.algorithm.dynamicSampling.enabled ? dynamicSampling(kernel.config.algorithm, services.rollouts, batch, step) : batch,
    );
  }
}

/** The plugin module's default export: `plugins: ['algorithms']`. */
export default function algorithmsPlugin(): AlgorithmsPlugin {
  return new AlgorithmsPlugin();
}
