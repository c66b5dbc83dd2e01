import { readFileSync } from 'node:fs';
import { DrmasError, makeTurn, TrainingBatch, type BatchView, type Turn } from '@drmas/core';

/** One line of a `drmas dpo` data file: TRL's `prompt`/`chosen`/`rejected`, and the agent that answers. */
export interface PreferencePair {
  /** The agent whose turn this is; may be left out when the config has one agent. */
  agent?: string;
  /** The prompt exactly as the agent sends it (chat template applied); encoded without adding special tokens. */
  prompt: string;
  /** The preferred response; the tokenizer's end-of-sequence token is appended, as to every response. */
  chosen: string;
  rejected: string;
  /** Its 1-based line in the file, for messages. */
  line: number;
}

const FORMAT = 'each line is one JSON object: {"prompt": "...", "chosen": "...", "rejected": "...", "agent": "solver"} ("agent" optional)';

/** Reads `{prompt, chosen, rejected[, agent]}` lines; a bad line is DATASET_INVALID naming the file, the line and the field. */
export function readPreferencePairs(file: string): PreferencePair[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    throw new DrmasError('DATASET_INVALID', `cannot read preference pairs file ${file}: ${(cause as Error).message}`, {
      key: '--data',
      file,
      cause,
      hint: 'give a JSONL file of {"prompt", "chosen", "rejected"} lines',
    });
  }
  const pairs: PreferencePair[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const where = `line ${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (cause) {
      throw new DrmasError('DATASET_INVALID', `${where} is not JSON: ${(cause as Error).message}`, {
        file,
        key: where,
        cause,
        hint: FORMAT,
      });
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new DrmasError('DATASET_INVALID', `${where} is not a JSON object`, { file, key: where, hint: FORMAT });
    const record = value as Record<string, unknown>;
    for (const field of ['prompt', 'chosen', 'rejected'] as const) {
      if (typeof record[field] !== 'string')
        throw new DrmasError('DATASET_INVALID', `${where} has no string "${field}"`, { file, key: `${where}.${field}`, hint: FORMAT });
    }
    // The first response token is predicted from the prompt, so a pair needs one.
    if (record.prompt === '')
      throw new DrmasError('DATASET_INVALID', `${where}: "prompt" is empty`, { file, key: `${where}.prompt`, hint: FORMAT });
    if (record.agent !== undefined && (typeof record.agent !== 'string' || record.agent === ''))
      throw new DrmasError('DATASET_INVALID', `${where}: "agent" must be a non-empty string`, {
        file,
        key: `${where}.agent`,
        hint: FORMAT,
      });
    if (record.chosen === record.rejected)
      throw new DrmasError('DATASET_INVALID', `${where}: "chosen" and "rejected" are the same text, so the pair prefers nothing`, {
        file,
        key: `${where}.rejected`,
        hint: 'leave such pairs out of the file',
      });
    pairs.push({
      prompt: record.prompt as string,
      chosen: record.chosen as string,
      rejected: record.rejected as string,
      line: i + 1,
      ...(record.agent === undefined ? {} : { agent: record.agent }),
    });
  });
  if (pairs.length === 0)
    throw new DrmasError('DATASET_INVALID', `${file} holds no preference pairs`, { file, key: '--data', hint: FORMAT });
  return pairs;
}

/** Two turns of one agent: the preferred and the dispreferred answer (to the same prompt, in the offline data). */
export interface TurnPair {
  chosen: Turn;
  rejected: Turn;
}

/**
 * Packs pairs of turns as the DPO loss reads them: rows [chosen 0, rejected 0, chosen 1, ...], `pairs` naming the
 * rows (the loss's `preference` column is made from it). Rows are scored at temperature 1 whatever the turns were
 * sampled at: DPO compares sequence likelihoods under the policy itself.
 */
export function preferenceBatch(pairs: readonly TurnPair[]): TrainingBatch {
  const atOne = (turn: Turn): Turn => makeTurn({ ...turn, temperature: undefined });
  const batch = TrainingBatch.fromTurns(pairs.flatMap((pair) => [atOne(pair.chosen), atOne(pair.rejected)]));
  batch.pairs = {
    chosen: Int32Array.from(pairs, (_, i) => 2 * i),
    rejected: Int32Array.from(pairs, (_, i) => 2 * i + 1),
  };
  return batch;
}

/** The rows of the pairs at `pairIndices` of a `preferenceBatch`, each pair's two rows adjacent, chosen first. */
export function pairRows(batch: TrainingBatch, pairIndices: readonly number[]): BatchView {
  const { chosen, rejected } = batch.pairs!;
  return { batch, rows: Int32Array.from(pairIndices.flatMap((p) => [chosen[p]!, rejected[p]!])) };
}
