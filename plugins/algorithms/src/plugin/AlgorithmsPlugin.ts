import {
  AdvantageEstimator,
  DrmasError,
  LossFunction,
  Stage,
  type Kernel,
  type Plugin,
  type RegisterContext,
  type RolloutBatch,
  type StepContext,
} from '@drmas/core';
import { ADVANTAGE_ESTIMATORS } from '../estimators/builtinEstimators.js';
import type { EstimatorDefinition } from '../estimators/types.js';
import { DynamicSamplingAccumulator } from '../sampling/dynamicSampling.js';
import { algorithmSection, type AlgorithmSettings } from './algorithmConfig.js';
import { PolicyLossFunction } from './PolicyLossFunction.js';
import { BatchEstimator } from './BatchEstimator.js';

const PLUGIN_NAME = 'algorithms';

function settingsOf(kernel: Kernel): AlgorithmSettings {
  return kernel.config.algorithm as AlgorithmSettings;
}

/** Reads `algorithm.loss` into the loss settings: each clip bound defaults to `clipRatio`. */
export function lossSettings(settings: AlgorithmSettings): PolicyLossFunction['settings'] {
  const loss = settings.loss;
  return {
    variant: loss.variant,
    clipRatioLow: loss.clipRatioLow ?? loss.clipRatio,
    clipRatioHigh: loss.clipRatioHigh ?? loss.clipRatio,
    clipRatioC: loss.clipRatioC,
    aggregation: loss.aggregation,
    lossScaleFactor: loss.lossScaleFactor,
    klCoef: loss.klCoef,
    klType: loss.klType,
    entropyCoef: loss.entropyCoef,
  };
}

/**
 * Drops groups whose episode outcomes are all equal and asks the rollout for more until the batch has as many
 * groups as the first round had (DAPO dynamic sampling), for at most `dynamicSampling.maxRounds` rounds.
 */
async function dynamicSampling(kernel: Kernel, first: RolloutBatch, step: StepContext): Promise<RolloutBatch> {
  const settings = settingsOf(kernel);
  const targetGroups = new Set(first.trajectories.map((t) => t.groupId)).size;
  if (targetGroups === 0) return first;
  const accumulator = new DynamicSamplingAccumulator({
    targetGroups,
    maxRounds: settings.dynamicSampling.maxRounds,
    keepSingletonGroups: true,
  });
  const rounds: RolloutBatch[] = [];
  let batch: RolloutBatch | undefined = first;
  while (batch) {
    rounds.push(batch);
    const status = accumulator.addRound(
      batch.trajectories.map((t) => t.outcome ?? 0),
      batch.trajectories.map((t) => t.groupId),
    );
    if (status !== 'need-more') break;
    batch = await kernel.hooks.rollout.promise(step);
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
  options: Pick<AlgorithmSettings, 'groupKey' | 'excludeZeroStdGroups' | 'statisticsUnit'>,
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

/**
 * Provides every advantage estimator by name (chosen with `algorithm.advantage`), the policy loss the trainers
 * use (`algorithm.loss`), and DAPO dynamic sampling on `afterRollout`.
 */
export class AlgorithmsPlugin implements Plugin {
  readonly name = PLUGIN_NAME;
  readonly configSchema = { algorithm: algorithmSection };

  register(ctx: RegisterContext): void {
    const options = () => {
      const s = ctx.config.algorithm as AlgorithmSettings;
      return {
        normalizeByStd: s.normalizeByStd,
        epsilon: s.epsilon,
        gamma: s.gamma,
        lam: s.lam,
        stepAdvantageWeight: s.stepAdvantageWeight,
        gigpoMode: s.gigpoMode,
        similarityThreshold: s.similarityThreshold,
        groupKey: s.groupKey,
        excludeZeroStdGroups: s.excludeZeroStdGroups,
        statisticsUnit: s.statisticsUnit,
      };
    };
    for (const definition of Object.values(ADVANTAGE_ESTIMATORS))
      ctx.provide(AdvantageEstimator, definition.name, new BatchEstimator(definition, options));
    ctx.bind(LossFunction).toDynamicValue(() => new PolicyLossFunction(lossSettings(ctx.config.algorithm as AlgorithmSettings)));
  }

  apply(kernel: Kernel): void {
    kernel.hooks.validate.tap(PLUGIN_NAME, (config) => {
      const s = config.algorithm as AlgorithmSettings;
      const estimator = s.advantage ? kernel.getNamed(AdvantageEstimator, s.advantage, 'algorithm.advantage') : undefined;
      if (estimator instanceof BatchEstimator) checkOptionsApply(estimator.definition, s, 'algorithm');
    });
    kernel.hooks.afterRollout.tapPromise({ name: PLUGIN_NAME, stage: Stage.FIRST }, async (batch, step) =>
      settingsOf(kernel).dynamicSampling.enabled ? dynamicSampling(kernel, batch, step) : batch,
    );
  }
}

/** The plugin module's default export: `plugins: ['algorithms']`. */
export default function algorithmsPlugin(): AlgorithmsPlugin {
  return new AlgorithmsPlugin();
}
