import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  CONFIG_HELP,
  CONFIG_OPTIONS,
  createKernel,
  didYouMean,
  DrmasError,
  integerOption,
  LIMITS,
  longestResponse,
  lossTotals,
  MetricsSink,
  numberOption,
  SeededRng,
  selectRows,
  TrainingBatch,
  WorkerGroups,
  type BatchView,
  type CliCommand,
  type Turn,
} from '@drmas/core';
import { NllLossFunction } from '@drmas/plugin-algorithms';
import { LearningRateSchedule } from '../optimizer/LearningRateSchedule.js';
import { TRAINER_LIMITS } from '../config/trainingConfig.js';
import { planWorkerGroups } from '../workerGroupPlan.js';
import type { TrainedWorkerGroup } from '../WorkerGroupsService.js';

export interface Demonstration {
  agent: string;
  /** The prompt exactly as the agent sends it (chat template applied); encoded without adding special tokens. */
  prompt: string;
  /** The target response; the tokenizer's end-of-sequence token is appended. */
  response: string;
}

/** Reads `{agent, prompt, response}` lines; a bad line is an error naming the file, the line and the field. */
export function readDemonstrations(file: string): Demonstration[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new DrmasError('INVALID_ARGUMENT', `cannot read demonstrations file ${file}`, {
      key: '--data',
      file,
      hint: 'give a JSONL file of {"agent", "prompt", "response"} lines',
    });
  }
  const demos: Demonstration[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(line) as Record<string, unknown>;
    } catch (cause) {
      throw new DrmasError('INVALID_ARGUMENT', `line ${i + 1} is not JSON: ${(cause as Error).message}`, {
        file,
        key: `line ${i + 1}`,
        cause,
        hint: 'each line is one JSON object: {"agent": "solver", "prompt": "...", "response": "..."}',
      });
    }
    for (const field of ['agent', 'prompt', 'response'] as const) {
      if (typeof value[field] !== 'string') {
        throw new DrmasError('INVALID_ARGUMENT', `line ${i + 1} has no string "${field}"`, {
          file,
          key: `line ${i + 1}.${field}`,
          hint: 'each line is {"agent": "solver", "prompt": "...", "response": "..."}',
        });
      }
    }
    demos.push(value as unknown as Demonstration);
  });
  if (demos.length === 0) {
    throw new DrmasError('INVALID_ARGUMENT', `${file} holds no demonstrations`, {
      file,
      key: '--data',
      hint: 'each line is one JSON object: {"agent": "solver", "prompt": "...", "response": "..."}',
    });
  }
  return demos;
}

/**
 * One demonstration as a turn whose trained tokens carry their loss weight in `advantages`: the response tokens
 * (weight 1) and, with a prompt weight above 0, every prompt token after the first (the first has no context to be
 * predicted from), each weighing `promptWeight`.
 */
export function demonstrationTurn(
  promptIds: number[],
  responseIds: number[],
  promptWeight: number,
): { promptIds: number[]; responseIds: number[]; weights: number[] } {
  if (promptWeight === 0 || promptIds.length < 2) return { promptIds, responseIds, weights: responseIds.map(() => 1) };
  return {
    promptIds: promptIds.slice(0, 1),
    responseIds: [...promptIds.slice(1), ...responseIds],
    weights: [...promptIds.slice(1).map(() => promptWeight), ...responseIds.map(() => 1)],
  };
}

/**
 * Writes each row's demonstration weights into the batch's advantages for the view's rows, scaled so they sum to the
 * view's token count: the NLL is then the weighted mean per token.
 */
function setWeights(view: BatchView, weights: readonly number[][]): void {
  const { responseLength: R, advantages } = view.batch;
  let tokens = 0;
  let total = 0;
  for (const row of view.rows) {
    for (const w of weights[row]!) total += w;
    tokens += weights[row]!.length;
  }
  const scale = total > 0 && total !== tokens ? tokens / total : 1;
  for (const row of view.rows)
    weights[row]!.forEach((w, j) => {
      advantages[row * R + j] = w * scale;
    });
}

/** A line every tenth of the run (and at least every two minutes): step, mean nll since the last line, lr, tokens per second. */
class SftProgress {
  private readonly every: number;
  private done = 0;
  private nll = 0;
  private count = 0;
  private tokens = 0;
  private since = performance.now();
  private lastLine = performance.now();

  constructor(
    private readonly log: (message: string) => void,
    private readonly group: string,
    private readonly totalSteps: number,
  ) {
    this.every = Math.max(1, Math.round(totalSteps / 10));
  }

  step(nll: number, lr: number, tokens: number): void {
    this.done++;
    this.nll += nll;
    this.count++;
    this.tokens += tokens;
    const now = performance.now();
    if (this.done % this.every !== 0 && now - this.lastLine < 120_000 && this.done !== this.totalSteps) return;
    const seconds = (now - this.since) / 1000;
    this.log(
      `sft ${this.group} step ${this.done}/${this.totalSteps}: nll ${(this.nll / this.count).toFixed(4)}, lr ${lr.toExponential(2)}, ${Math.round(this.tokens / seconds)} tok/s`,
    );
    this.nll = 0;
    this.count = 0;
    this.tokens = 0;
    this.since = now;
    this.lastLine = now;
  }
}

export const sft: CliCommand = {
  name: 'sft',
  summary: 'supervised warm-up of each worker group on JSONL demonstrations (prompt/response per agent)',
  usage:
    'drmas sft --config PATH --data FILE.jsonl [--epochs 3] [--batch-size 16] [--lr 1e-3] [--schedule cosine|linear|constant] [--warmup-steps N] [--prompt-loss-weight W] [--out DIR] [--dtype float32|bfloat16]',
  help: [
    ...CONFIG_HELP,
    ['--data FILE', 'JSONL of {"agent", "prompt", "response"}: prompt as the agent sends it, response as it should answer'],
    ['--epochs N', 'passes over the demonstrations (default 3)'],
    ['--batch-size N', 'demonstrations per optimizer step (default 16)'],
    ['--lr X', "learning rate (default: the model's optimizer.lr)"],
    [
      '--schedule S',
      'cosine (default: after the warm-up, a half-cosine to 0 at the last step), linear (to 0 at the last step) or constant',
    ],
    ['--warmup-steps N', 'optimizer steps of linear warm-up (default: 3% of all steps)'],
    [
      '--prompt-loss-weight W',
      'also train on the prompt tokens, each counting W times a response token (default 0: responses only); the logged nll is then the weighted mean',
    ],
    ['--out DIR', "where each worker group's model is saved (default <trainer.outputDir>/sft-<time>/<model id>)"],
    ['--dtype D', 'weights dtype of the saved models: float32 (default) or bfloat16'],
  ],
  options: {
    ...CONFIG_OPTIONS,
    data: { type: 'string' },
    epochs: { type: 'string' },
    'batch-size': { type: 'string' },
    lr: { type: 'string' },
    schedule: { type: 'string' },
    'warmup-steps': { type: 'string' },
    out: { type: 'string' },
    dtype: { type: 'string' },
    'prompt-loss-weight': { type: 'string' },
  },
  async run({ values }, io) {
    if (!values.data) throw new DrmasError('INVALID_ARGUMENT', '--data is required', { key: '--data', hint: 'e.g. --data demos.jsonl' });
    const dtype = (values.dtype as string | undefined) ?? 'float32';
    if (dtype !== 'float32' && dtype !== 'bfloat16')
      throw new DrmasError('INVALID_ARGUMENT', `--dtype must be float32 or bfloat16, got "${dtype}"`, {
        key: '--dtype',
        hint: 'bfloat16 halves the saved weights; float32 keeps them exact',
      });
    const demos = readDemonstrations(path.resolve(io.cwd, values.data as string));
    const epochs = integerOption(values, 'epochs', { min: 1, max: TRAINER_LIMITS.epochs, example: 3 }) ?? 3;
    const batchSize = integerOption(values, 'batch-size', { min: 1, max: TRAINER_LIMITS.rows, example: 16 }) ?? 16;
    const schedule = (values.schedule as string | undefined) ?? 'cosine';
    if (schedule !== 'cosine' && schedule !== 'linear' && schedule !== 'constant') {
      throw new DrmasError('INVALID_ARGUMENT', `--schedule must be cosine, linear or constant, got "${schedule}"`, {
        key: '--schedule',
        hint: `e.g. --schedule cosine.${didYouMean(schedule, ['cosine', 'linear', 'constant'])}`,
      });
    }
    const warmup = integerOption(values, 'warmup-steps', { min: 0, max: LIMITS.steps, of: 'steps', example: 10 });
    // 0 (the default) trains on responses only; 1 counts a prompt token as much as a response token.
    const promptWeight = numberOption(values, 'prompt-loss-weight', { min: 0, example: 0.1 }) ?? 0;
    const lr = numberOption(values, 'lr', { min: 0, exclusiveMin: true, example: '1e-3' });
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
          hint: 'name the preset whose agents the demonstrations are for, e.g. "presets": ["math"]',
        },
      );
    }
    // Demonstrations for agents the config lacks are found before any model loads.
    const known = new Set(planWorkerGroups(config).flatMap((plan) => plan.agents));
    const unknown = [...new Set(demos.map((d) => d.agent))].filter((a) => !known.has(a));
    if (unknown.length) {
      throw new DrmasError('INVALID_ARGUMENT', `demonstrations name agents the config does not have: ${unknown.join(', ')}`, {
        key: '--data',
        hint: `agents in the config: ${[...known].join(', ') || '(none)'}`,
      });
    }
    const outDir = path.resolve(
      io.cwd,
      (values.out as string | undefined) ?? path.join(config.trainer.outputDir, `sft-${new Date().toISOString().replace(/[:.]/g, '-')}`),
    );
    const log = (message: string) => io.stderr.write(`drmas: ${message}\n`);
    const run = await kernel.setup({ runDir: outDir, runDirKey: values.out === undefined ? 'trainer.outputDir' : '--out', log });
    const loss = new NllLossFunction();
    try {
      const groups = kernel.get(WorkerGroups);
      const sinks = kernel.getAll(MetricsSink);
      for (const group of groups.all() as TrainedWorkerGroup[]) {
        const codec = group.codec;
        if (!codec)
          throw new DrmasError('INVALID_ARGUMENT', `model ${group.id} has no tokenizer, so text demonstrations cannot be encoded`, {
            key: `models.${group.id}.model`,
            hint: 'give the model a checkpoint folder with tokenizer.json, or a built-in model (tiny, small)',
          });
        const eos = codec.eosTokenId === undefined ? [] : [codec.eosTokenId];
        const weights: number[][] = [];
        const turns: Turn[] = demos
          .filter((d) => group.agents.includes(d.agent))
          .map((demo, index) => {
            const {
              promptIds,
              responseIds,
              weights: rowWeights,
            } = demonstrationTurn(
              codec.encode(demo.prompt, { addSpecialTokens: false }),
              [...codec.encode(demo.response, { addSpecialTokens: false }), ...eos],
              promptWeight,
            );
            weights.push(rowWeights);
            return {
              groupId: `sft-${index}`,
              trajectoryId: `sft-${index}`,
              agentId: demo.agent,
              step: 0,
              workerGroupId: group.id,
              index: 0,
              promptIds,
              responseIds,
              logProbs: responseIds.map(() => 0),
              valid: true,
            };
          });
        if (turns.length === 0) continue;
        const all = TrainingBatch.fromTurns(turns).all();
        const rng = new SeededRng(config.trainer.seed).fork(`sft/${group.id}`);
        const totalSteps = epochs * Math.ceil(turns.length / batchSize);
        const optimizer = {
          ...group.training.optimizer,
          lr: lr ?? group.training.optimizer.lr,
        };
        const lrSchedule = new LearningRateSchedule(schedule, warmup ?? Math.ceil(0.03 * totalSteps), totalSteps);
        const { microBatchSize } = group.training;
        const progress = new SftProgress(log, group.id, totalSteps);
        let stepIndex = 0;
        for (let epoch = 1; epoch <= epochs; epoch++) {
          const order = rng.shuffle(turns.map((_, i) => i));
          let total = 0;
          let batches = 0;
          for (let start = 0; start < order.length; start += batchSize) {
            const view = selectRows(all, order.slice(start, start + batchSize));
            setWeights(view, weights);
            const result = await group.trainer.update({
              batch: view,
              totals: lossTotals(view, { responseLength: longestResponse(view), microBatchSize }),
              loss,
              microBatchSize,
              optimizer,
              lrScale: lrSchedule.scaleAt(stepIndex++),
            });
            total += result.loss;
            batches++;
            let tokens = 0;
            for (const row of view.rows) tokens += all.batch.promptIds[row]!.length + all.batch.responseLengths[row]!;
            progress.step(result.loss, result.learningRate, tokens);
          }
          const metrics = { [`sft/${group.id}/nll`]: total / batches, [`sft/${group.id}/demonstrations`]: turns.length };
          for (const sink of sinks) await sink.write({ step: epoch, metrics });
          log(`sft ${group.id} epoch ${epoch}/${epochs}: nll ${(total / batches).toFixed(4)} over ${turns.length} demonstrations`);
        }
        const dir = path.join(outDir, group.id);
        await group.trainer.save(dir, { optimizer: false, dtype });
        log(`saved ${dir}`);
      }
    } finally {
      await kernel.hooks.shutdown.promise();
    }
    void run;
    return 0;
  },
};
