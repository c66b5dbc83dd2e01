import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { main, Rollouts, type CliIO, type Kernel, type RunContext, type Turn } from '@drmas/core';

export interface DemonstrationLine {
  agent: string;
  /** The prompt exactly as the agent sent it. */
  prompt: string;
  response: string;
}

export interface CollectOptions {
  /** Episodes whose outcome is below this are left out (default 1: only successful ones). */
  minOutcome?: number;
  /** Turns of kept episodes for which this is false are left out (e.g. a deliberate mistake the teacher made). */
  keep?: (line: DemonstrationLine) => boolean;
}

/** Turns as demonstration lines (the prompt as the agent sent it, the response as it answered), less those `keep` rejects. */
export function demonstrationLines(turns: readonly Turn[], keep?: (line: DemonstrationLine) => boolean): DemonstrationLine[] {
  return turns
    .map((turn) => ({ agent: turn.agentId, prompt: turn.promptText ?? '', response: turn.responseText ?? '' }))
    .filter((line) => keep?.(line) ?? true);
}

/**
 * Runs the kernel's rollout `rounds` times (its models should be teacher backends) and returns every turn of the
 * episodes that reach `minOutcome` as a demonstration line, less the turns `keep` rejects.
 */
export async function collectDemonstrations(
  kernel: Kernel,
  run: RunContext,
  rounds: number,
  options: CollectOptions = {},
): Promise<DemonstrationLine[]> {
  const lines: DemonstrationLine[] = [];
  for (let round = 1; round <= rounds; round++) {
    const batch = await kernel.get(Rollouts).next({ run, step: round, metrics: {}, distributions: {} });
    for (const trajectory of batch.trajectories) {
      if ((trajectory.outcome ?? 0) < (options.minOutcome ?? 1)) continue;
      lines.push(...demonstrationLines(trajectory.turns, options.keep));
    }
  }
  return lines;
}

/**
 * Sets the kernel up, collects `rounds` rounds of demonstrations (see `collectDemonstrations`) and writes them to
 * `<workDir>/demonstrations.jsonl`, the input of `drmas sft`.
 */
export async function writeDemonstrations(
  kernel: Kernel,
  rounds: number,
  workDir: string,
  options: CollectOptions = {},
): Promise<{ file: string; lines: number }> {
  const run = await kernel.setup({ runDir: workDir, log: () => {} });
  try {
    const demos = await collectDemonstrations(kernel, run, rounds, options);
    mkdirSync(workDir, { recursive: true });
    const file = path.join(workDir, 'demonstrations.jsonl');
    writeFileSync(file, `${demos.map((d) => JSON.stringify(d)).join('\n')}\n`);
    return { file, lines: demos.length };
  } finally {
    await kernel.shutdown();
  }
}

/** Options of a preset's base rebuild: teacher rollouts, then the warm-up of `tiny` on their demonstrations. */
export interface BaseBuildOptions {
  /** Rollout rounds of the teacher (each draws `promptsPerStep` training tasks). */
  rounds: number;
  promptsPerStep?: number;
  seed?: number;
  /** Where demonstrations.jsonl is written. */
  workDir: string;
  /** The checkpoint folder the model is saved under (as `<outDir>/policy`). */
  outDir: string;
  epochs: number;
  lr?: number;
  batchSize?: number;
  dtype?: 'float32' | 'bfloat16';
  /** `drmas sft --prompt-loss-weight`: also train on prompt tokens, each counting this much (default 0). */
  promptLossWeight?: number;
  /** A checkpoint to continue from instead of a freshly initialised `tiny` (a second stage of warm-up). */
  from?: string;
  io?: CliIO;
}

export interface WarmupOptions {
  /** The config `drmas sft` reads (the preset with `model: tiny`). */
  config: string;
  data: string;
  /** The model is saved as `<outDir>/<model id>`. */
  outDir: string;
  workDir: string;
  epochs: number;
  lr?: number;
  batchSize?: number;
  dtype?: 'float32' | 'bfloat16';
  promptLossWeight?: number;
  seed?: number;
  /** Extra `--set KEY=VALUE` overrides of the config. */
  overrides?: string[];
  io: CliIO;
}

/** `drmas sft` on the demonstrations: the supervised warm-up that makes a preset's base checkpoint. */
export function supervisedWarmup(options: WarmupOptions): Promise<number> {
  return main(
    [
      'sft',
      '--config',
      options.config,
      '--data',
      options.data,
      '--out',
      options.outDir,
      '--epochs',
      String(options.epochs),
      '--lr',
      String(options.lr ?? 2e-3),
      '--batch-size',
      String(options.batchSize ?? 32),
      '--dtype',
      options.dtype ?? 'bfloat16',
      '--prompt-loss-weight',
      String(options.promptLossWeight ?? 0),
      '--set',
      `trainer.seed=${options.seed ?? 0}`,
      '--set',
      `trainer.outputDir=${options.workDir}`,
      ...(options.overrides ?? []).flatMap((setting) => ['--set', setting]),
    ],
    options.io,
  );
}

/**
 * The warm-up stage of a preset's base rebuild: `drmas sft` with `<presetDir>/base.config.json` on `data`, continuing
 * from `options.from` when given (its model id is `policy`), saved to `<outDir>/policy`.
 */
export function warmupPresetBase(presetDir: string, data: string, options: BaseBuildOptions): Promise<number> {
  const io = options.io ?? { stdout: process.stdout, stderr: process.stderr, cwd: presetDir };
  return supervisedWarmup({
    config: path.join(presetDir, 'base.config.json'),
    data,
    outDir: options.outDir,
    workDir: options.workDir,
    epochs: options.epochs,
    lr: options.lr,
    batchSize: options.batchSize,
    dtype: options.dtype,
    promptLossWeight: options.promptLossWeight,
    seed: options.seed,
    io: { ...io, cwd: presetDir },
    overrides: options.from ? [`models.policy.model=${path.resolve(options.from)}`] : [],
  });
}
