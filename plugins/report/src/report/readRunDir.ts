import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { redactUrlsInText } from '@drmas/core';
import { parseJsonLines, parseLenientJson, type JsonRecord } from './parseJsonLines.js';

/** The files of a run directory a report is made from; every part is optional. */
export interface RunFiles {
  runDir: string;
  config: JsonRecord | undefined;
  /** `metrics.jsonl`: one object per step. */
  metrics: JsonRecord[];
  /** `eval.jsonl`: one object per evaluation. */
  evaluations: JsonRecord[];
  /** The last lines of `rollouts.jsonl`: at most its last `ROLLOUT_TAIL_BYTES`. */
  rollouts: JsonRecord[];
  /** The size of `rollouts.jsonl`, and whether only its tail was read. */
  rolloutsFile: { bytes: number; tailOnly: boolean } | undefined;
  notes: string[];
}

/** `rollouts.jsonl` grows with every step; only its tail is read for the rollout browser. */
export const ROLLOUT_TAIL_BYTES = 4 << 20;

function readTail(file: string, bytes: number): { text: string; truncated: boolean } {
  const size = statSync(file).size;
  if (size <= bytes) return { text: readFileSync(file, 'utf8'), truncated: false };
  const buffer = Buffer.alloc(bytes);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buffer, 0, bytes, size - bytes);
  } finally {
    closeSync(fd);
  }
  const text = buffer.toString('utf8');
  // The first line is cut at an arbitrary byte: drop it.
  return { text: text.slice(text.indexOf('\n') + 1), truncated: true };
}

function readJsonLinesFile(file: string, notes: string[], tailBytes?: number): JsonRecord[] {
  if (!existsSync(file)) return [];
  const { text } = tailBytes === undefined ? { text: readFileSync(file, 'utf8') } : readTail(file, tailBytes);
  const parsed = parseJsonLines(text, path.basename(file));
  notes.push(...parsed.notes);
  return parsed.records;
}

/**
 * A config.json's values with the user info of any URL in them redacted. drmas writes config.json with its secret keys
 * already redacted; this keeps a run written before it did (or by a plugin's key never marked) out of the page too.
 */
function withoutUrlCredentials(value: unknown): unknown {
  if (typeof value === 'string') return redactUrlsInText(value);
  if (Array.isArray(value)) return value.map(withoutUrlCredentials);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutUrlCredentials(v)]));
  return value;
}

export function readRunDir(runDir: string): RunFiles {
  const notes: string[] = [];
  let config: JsonRecord | undefined;
  const configFile = path.join(runDir, 'config.json');
  if (existsSync(configFile)) {
    try {
      const value = parseLenientJson(readFileSync(configFile, 'utf8'));
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) config = withoutUrlCredentials(value) as JsonRecord;
      else notes.push('config.json: not a JSON object; the run summary has no config');
    } catch (error) {
      notes.push(`config.json: not valid JSON (${redactUrlsInText((error as Error).message)}); the run summary has no config`);
    }
  } else {
    notes.push('config.json: not found; the run summary has no config');
  }
  const metricsFile = path.join(runDir, 'metrics.jsonl');
  const rolloutsFile = path.join(runDir, 'rollouts.jsonl');
  if (!existsSync(metricsFile)) notes.push('metrics.jsonl: not found; the report has no plots');
  return {
    runDir,
    config,
    metrics: readJsonLinesFile(metricsFile, notes),
    evaluations: readJsonLinesFile(path.join(runDir, 'eval.jsonl'), notes),
    rollouts: readJsonLinesFile(rolloutsFile, notes, ROLLOUT_TAIL_BYTES),
    rolloutsFile: existsSync(rolloutsFile)
      ? { bytes: statSync(rolloutsFile).size, tailOnly: statSync(rolloutsFile).size > ROLLOUT_TAIL_BYTES }
      : undefined,
    notes,
  };
}
