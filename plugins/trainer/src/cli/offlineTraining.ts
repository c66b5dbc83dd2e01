import path from 'node:path';
import {
  CONFIG_HELP,
  CONFIG_OPTIONS,
  createKernel,
  didYouMean,
  DrmasError,
  integerOption,
  LIMITS,
  makeTurn,
  numberOption,
  WorkerGroups,
  type BatchView,
  type CliIO,
  type OptionSpec,
  type Kernel,
  type ResolvedConfig,
  type RunContext,
  type Turn,
} from '@drmas/core';
import { LearningRateSchedule } from '../optimizer/LearningRateSchedule.js';
import { TRAINER_LIMITS } from '../config/trainingConfig.js';
import { planWorkerGroups } from '../workerGroupPlan.js';
import { WorkerGroupsService, type TrainedWorkerGroup } from '../WorkerGroupsService.js';

/**
 * What `drmas sft` and `drmas dpo` share: training each worker group on a file of examples outside the rollout loop,
 * with the same options for passes, batches, learning-rate schedule and the saved models.
 */

type Values = Readonly<Record<string, unknown>>;

/** The command-line options both commands take (with the config's). */
export const OFFLINE_OPTIONS: OptionSpec = {
  ...CONFIG_OPTIONS,
  data: { type: 'string' },
  epochs: { type: 'string' },
  'batch-size': { type: 'string' },
  lr: { type: 'string' },
  schedule: { type: 'string' },
  'warmup-steps': { type: 'string' },
  out: { type: 'string' },
  dtype: { type: 'string' },
};

/** Help lines of `OFFLINE_OPTIONS`, `unit` naming what a batch counts (demonstrations, pairs). */
export function offlineHelp(command: string, unit: string, defaults: { epochs: number; batchSize: number }): [string, string][] {
  return [
    ...CONFIG_HELP,
    ['--epochs N', `passes over the ${unit} (default ${defaults.epochs})`],
    ['--batch-size N', `${unit} per optimizer step (default ${defaults.batchSize})`],
    ['--lr X', "learning rate (default: the model's optimizer.lr)"],
    [
      '--schedule S',
      'cosine (default: after the warm-up, a half-cosine to 0 at the last step), linear (to 0 at the last step) or constant',
    ],
    ['--warmup-steps N', 'optimizer steps of linear warm-up (default: 3% of all steps)'],
    ['--out DIR', `where each worker group's model is saved (default <trainer.outputDir>/${command}-<time>/<model id>)`],
    ['--dtype D', 'weights dtype of the saved models: float32 (default) or bfloat16'],
  ];
}

export interface OfflineSettings {
  epochs: number;
  batchSize: number;
  schedule: 'cosine' | 'linear' | 'constant';
  warmupSteps: number | undefined;
  lr: number | undefined;
  dtype: 'float32' | 'bfloat16';
}

/** The shared options' values, each checked before anything loads; `--data` is required. */
export function offlineSettings(values: Values, defaults: { epochs: number; batchSize: number; dataExample: string }): OfflineSettings {
  if (!values.data)
    throw new DrmasError('INVALID_ARGUMENT', '--data is required', { key: '--data', hint: `e.g. --data ${defaults.dataExample}` });
  const dtype = (values.dtype as string | undefined) ?? 'float32';
  if (dtype !== 'float32' && dtype !== 'bfloat16')
    throw new DrmasError('INVALID_ARGUMENT', `--dtype must be float32 or bfloat16, got "${dtype}"`, {
      key: '--dtype',
      hint: 'bfloat16 halves the saved weights; float32 keeps them exact',
    });
  const schedule = (values.schedule as string | undefined) ?? 'cosine';
  if (schedule !== 'cosine' && schedule !== 'linear' && schedule !== 'constant') {
    throw new DrmasError('INVALID_ARGUMENT', `--schedule must be cosine, linear or constant, got "${schedule}"`, {
      key: '--schedule',
      hint: `e.g. --schedule cosine.${didYouMean(schedule, ['cosine', 'linear', 'constant'])}`,
    });
  }
  return {
    epochs: integerOption(values, 'epochs', { min: 1, max: TRAINER_LIMITS.epochs, example: defaults.epochs }) ?? defaults.epochs,
    batchSize: integerOption(values, 'batch-size', { min: 1, max: TRAINER_LIMITS.rows, example: defaults.batchSize }) ?? defaults.batchSize,
    schedule,
    warmupSteps: integerOption(values, 'warmup-steps', { min: 0, max: LIMITS.steps, of: 'steps', example: 10 }),
    lr: numberOption(values, 'lr', { min: 0, exclusiveMin: true, example: '1e-3' }),
    dtype,
  };
}

export interface OfflineKernel {
  kernel: Kernel;
  config: ResolvedConfig;
  run: RunContext;
  /** Where each worker group's model is saved, as `<outDir>/<model id>`. */
  outDir: string;
  groups: TrainedWorkerGroup[];
  log: (message: string) => void;
}

/**
 * The config's kernel, set up (models loaded) after checking that it trains a model and that every agent the
 * examples name is in it: `agentsOf` gets the config's agents (and the config, for checks of the command's own) and
 * returns those of the examples (`what` says what the
 * examples are, for the messages).
 */
export async function openOfflineKernel(
  command: string,
  values: Values,
  io: CliIO,
  agentsOf: (known: readonly string[], config: ResolvedConfig) => readonly string[],
  what: string,
): Promise<OfflineKernel> {
  const { kernel, config, file } = await createKernel({
    cwd: io.cwd,
    configPath: values.config as string | undefined,
    overrides: values.set as string[] | undefined,
  });
  if (!kernel.container.isBound(WorkerGroups.id)) {
    throw new DrmasError(
      'CONFIG_INVALID',
      `nothing in ${file ?? 'the config'} trains a model: no preset or plugin provides worker groups`,
      {
        key: 'presets',
        file,
        hint: `name the preset whose agents the ${what} are for, e.g. "presets": ["math"]`,
      },
    );
  }
  // Examples for agents the config lacks are found before any model loads.
  const known = new Set(planWorkerGroups(config).flatMap((plan) => plan.agents));
  const unknown = [...new Set(agentsOf([...known], config))].filter((a) => !known.has(a));
  if (unknown.length) {
    throw new DrmasError('INVALID_ARGUMENT', `${what} name agents the config does not have: ${unknown.join(', ')}`, {
      key: '--data',
      hint: `agents in the config: ${[...known].join(', ') || '(none)'}`,
    });
  }
  const outDir = path.resolve(
    io.cwd,
    (values.out as string | undefined) ??
      path.join(config.trainer.outputDir, `${command}-${new Date().toISOString().replace(/[:.]/g, '-')}`),
  );
  const log = (message: string) => io.stderr.write(`drmas: ${message}\n`);
  const run = await kernel.setup({ runDir: outDir, runDirKey: values.out === undefined ? 'trainer.outputDir' : '--out', log });
  const groups = kernel.get(WorkerGroupsService).all();
  const untokenized = groups.find((group) => !group.codec);
  if (untokenized) {
    await kernel.shutdown();
    throw new DrmasError('INVALID_ARGUMENT', `model ${untokenized.id} has no tokenizer, so text ${what} cannot be encoded`, {
      key: `models.${untokenized.id}.model`,
      hint: 'give the model a checkpoint folder with tokenizer.json, or a built-in model (tiny, small)',
    });
  }
  return { kernel, config, run, outDir, groups, log };
}

/** A group's optimizer settings with `--lr` applied, and the schedule over `totalSteps` optimizer steps. */
export function offlineOptimizer(group: TrainedWorkerGroup, settings: OfflineSettings, totalSteps: number) {
  return {
    optimizer: { ...group.training.optimizer, lr: settings.lr ?? group.training.optimizer.lr },
    schedule: new LearningRateSchedule(settings.schedule, settings.warmupSteps ?? Math.ceil(0.03 * totalSteps), totalSteps),
  };
}

/** An example as a turn of its own (its own group and trajectory), for packing into a batch outside the rollout loop. */
export function offlineTurn(promptIds: number[], responseIds: number[], agentId: string, workerGroupId: string, id: string): Turn {
  return makeTurn({
    groupId: id,
    trajectoryId: id,
    agentId,
    round: 0,
    workerGroupId,
    index: 0,
    promptIds,
    responseIds,
    logProbs: responseIds.map(() => 0),
    valid: true,
  });
}

/** Saves a group's trained model as `<outDir>/<model id>` (weights only, as a Hugging Face folder). */
export async function saveOfflineModel(
  group: TrainedWorkerGroup,
  outDir: string,
  settings: OfflineSettings,
  log: (message: string) => void,
) {
  const dir = path.join(outDir, group.id);
  await group.trainer.save(dir, { optimizer: false, dtype: settings.dtype });
  log(`saved ${dir}`);
}

/** Prompt and response tokens of a view's rows (the throughput the progress line reports). */
export function viewTokens(view: BatchView): number {
  let tokens = 0;
  for (const row of view.rows) tokens += view.batch.promptIds[row]!.length + view.batch.responseLengths[row]!;
  return tokens;
}

/**
 * A line every tenth of the run (and at least every two minutes): step, the means of the named values since the last
 * line (`nll`, `loss`, ...), lr, tokens per second.
 */
export class OfflineProgress {
  private readonly every: number;
  private done = 0;
  private sums: Record<string, number> = {};
  private count = 0;
  private tokens = 0;
  private since = performance.now();
  private lastLine = performance.now();

  constructor(
    private readonly log: (message: string) => void,
    private readonly label: string,
    private readonly totalSteps: number,
  ) {
    this.every = Math.max(1, Math.round(totalSteps / 10));
  }

  step(values: Record<string, number>, lr: number, tokens: number): void {
    this.done++;
    for (const [k, v] of Object.entries(values)) this.sums[k] = (this.sums[k] ?? 0) + v;
    this.count++;
    this.tokens += tokens;
    const now = performance.now();
    if (this.done % this.every !== 0 && now - this.lastLine < 120_000 && this.done !== this.totalSteps) return;
    const seconds = (now - this.since) / 1000;
    const means = Object.entries(this.sums).map(([k, v]) => `${k} ${(v / this.count).toFixed(4)}`);
    this.log(
      `${this.label} step ${this.done}/${this.totalSteps}: ${means.join(', ')}, lr ${lr.toExponential(2)}, ${Math.round(this.tokens / seconds)} tok/s`,
    );
    this.sums = {};
    this.count = 0;
    this.tokens = 0;
    this.since = now;
    this.lastLine = now;
  }
}
