import type { Writable } from 'node:stream';
import { scoreSequences } from '@drmas/core';
import { openPolicyBackend, type EngineOptions } from './openPolicyBackend.js';
import { CommandInputError } from './generateCommand.js';

export interface ScoreCommandOptions extends Pick<EngineOptions, 'cwd' | 'log'> {
  /** `tiny`, `small` or a checkpoint folder. */
  model: string;
  ids: number[];
  /** Ids before this position are context only (null log-prob); default 1. */
  promptLength?: number;
  json?: boolean;
  runtime?: string;
  seed?: number;
  /** The engine (`onnx`, `tfjs`); default `auto`: the best one available that scores, as training chooses. */
  engine?: string;
}

/**
 * `drmas score`: the log-prob of each id after its prefix. Prints `{"logprobs": [null, -2.1, ...]}` with `json`
 * (null for context positions), else one `position id logprob` line per id. Returns the log-probs.
 */
export async function scoreCommand(options: ScoreCommandOptions, out: Writable = process.stdout): Promise<(number | null)[]> {
  const promptLength = options.promptLength ?? 1;
  if (!Number.isInteger(promptLength) || promptLength < 1 || promptLength > options.ids.length) {
    throw new CommandInputError('prompt-length', `must be an integer in [1, ${options.ids.length}], got ${options.promptLength}`);
  }
  const backend = await openPolicyBackend(
    options.engine,
    { model: options.model, runtime: options.runtime, seed: options.seed, cwd: options.cwd, log: options.log },
    ['score'],
  );
  try {
    const vocab = backend.vocabSize;
    const bad = options.ids.find((id) => !Number.isInteger(id) || id < 0 || id >= vocab);
    if (bad !== undefined) throw new CommandInputError('ids', `id ${bad} is outside the vocabulary [0, ${vocab})`);
    const { logProbs } = await scoreSequences(backend, [options.ids.slice(0, promptLength)], [options.ids.slice(promptLength)]);
    const result: (number | null)[] = [...new Array<null>(promptLength).fill(null), ...logProbs[0]!];
    if (options.json) out.write(JSON.stringify({ logprobs: result }) + '\n');
    else result.forEach((lp, i) => out.write(`${i}\t${options.ids[i]}\t${lp === null ? '-' : lp.toFixed(6)}\n`));
    return result;
  } finally {
    backend.dispose();
  }
}
