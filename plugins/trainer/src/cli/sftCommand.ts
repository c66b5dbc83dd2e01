import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  DrmasError,
  longestResponse,
  lossTotals,
  MetricsSink,
  numberOption,
  SeededRng,
  selectRows,
  TrainingBatch,
  type BatchView,
  type CliCommand,
  type Turn,
} from '@drmas/core';
import { NllLossFunction } from '@drmas/plugin-algorithms';
import {
  OFFLINE_OPTIONS,
  offlineHelp,
  offlineOptimizer,
  OfflineProgress,
  offlineSettings,
  offlineTurn,
  openOfflineKernel,
  saveOfflineModel,
  viewTokens,
} from './offlineTraining.js';

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
    const stringField = (field: keyof Demonstration): string => {
      const read = value[field];
      if (typeof read === 'string') return read;
      throw new DrmasError('INVALID_ARGUMENT', `line ${i + 1} has no string "${field}"`, {
        file,
        key: `line ${i + 1}.${field}`,
        hint: 'each line is {"agent": "solver", "prompt": "...", "response": "..."}',
      });
    };
    const demonstration: Demonstration = {
      agent: stringField('agent'),
      prompt: stringField('prompt'),
      response: stringField('response'),
    };
    // The first response token is predicted from the prompt, so a demonstration needs one.
    if (demonstration.prompt === '') {
      throw new DrmasError('INVALID_ARGUMENT', `line ${i + 1} has an empty "prompt"`, {
        file,
        key: `line ${i + 1}.prompt`,
        hint: 'give the prompt as the agent sends it (chat template applied)',
      });
    }
    demos.push(demonstration);
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
 * One demonstration as a turn whose trained tokens each carry a loss weight (the batch's `lossWeights`): the response tokens
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
 * Writes each row's demonstration weights into the batch's `lossWeights` for the view's rows, scaled so they sum to
 * the view's token count: the NLL is then the weighted mean per token.
 */
function setWeights(view: BatchView, weights: readonly number[][]): void {
  const { responseLength: R, rows } = view.batch;
  const lossWeights = (view.batch.lossWeights ??= new Float32Array(rows * R));
  let tokens = 0;
  let total = 0;
  for (const row of view.rows) {
    for (const w of weights[row]!) total += w;
    tokens += weights[row]!.length;
  }
  const scale = total > 0 && total !== tokens ? tokens / total : 1;
  for (const row of view.rows)
    weights[row]!.forEach((w, j) => {
      lossWeights[row * R + j] = w * scale;
    });
}

export const sft: CliCommand = {
  name: 'sft',
  summary: 'supervised warm-up of each worker group on JSONL demonstrations (prompt/response per agent)',
  usage:
    'drmas sft --config PATH --data FILE.jsonl [--epochs 3] [--batch-size 16] [--lr 1e-3] [--schedule cosine|linear|constant] [--warmup-steps N] [--prompt-loss-weight W] [--out DIR] [--dtype float32|bfloat16]',
  help: [
    ...offlineHelp('sft', 'demonstrations', { epochs: 3, batchSize: 16 }),
    ['--data FILE', 'JSONL of {"agent", "prompt", "response"}: prompt as the agent sends it, response as it should answer'],
    [
      '--prompt-loss-weight W',
      'also train on the prompt tokens, each counting W times a response token (default 0: responses only); the logged nll is then the weighted mean',
    ],
  ],
  options: { ...OFFLINE_OPTIONS, 'prompt-loss-weight': { type: 'string' } },
  async run({ values }, io) {
    const settings = offlineSettings(values, { epochs: 3, batchSize: 16, dataExample: 'demos.jsonl' });
    const demos = readDemonstrations(path.resolve(io.cwd, values.data as string));
    // 0 (the default) trains on responses only; 1 counts a prompt token as much as a response token.
    const promptWeight = numberOption(values, 'prompt-loss-weight', { min: 0, example: 0.1 }) ?? 0;
    const { kernel, config, outDir, groups, log } = await openOfflineKernel(
      'sft',
      values,
      io,
      () => demos.map((d) => d.agent),
      'demonstrations',
    );
    const { epochs, batchSize } = settings;
    const loss = new NllLossFunction();
    try {
      const sinks = kernel.getAll(MetricsSink);
      for (const group of groups) {
        const codec = group.codec!;
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
            return offlineTurn(promptIds, responseIds, demo.agent, group.id, `sft-${index}`);
          });
        if (turns.length === 0) continue;
        const all = TrainingBatch.fromTurns(turns).all();
        const rng = new SeededRng(config.trainer.seed).fork(`sft/${group.id}`);
        const totalSteps = epochs * Math.ceil(turns.length / batchSize);
        const { optimizer, schedule: lrSchedule } = offlineOptimizer(group, settings, totalSteps);
        const { microBatchSize } = group.training;
        const progress = new OfflineProgress(log, `sft ${group.id}`, totalSteps);
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
            progress.step({ nll: result.loss }, result.learningRate, viewTokens(view));
          }
          const metrics = { [`sft/${group.id}/nll`]: total / batches, [`sft/${group.id}/demonstrations`]: turns.length };
          for (const sink of sinks) await sink.write({ step: epoch, metrics });
          log(`sft ${group.id} epoch ${epoch}/${epochs}: nll ${(total / batches).toFixed(4)} over ${turns.length} demonstrations`);
        }
        await saveOfflineModel(group, outDir, settings, log);
      }
    } finally {
      await kernel.shutdown();
    }
    return 0;
  },
};
