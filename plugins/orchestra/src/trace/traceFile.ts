import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { EpisodeTrace } from './EpisodeTrace.js';

/** The run file the async executor's episode traces go to, one JSON line per episode. */
export const TRACES_FILE = 'traces.jsonl';

/** Appends a step's traces to `<runDir>/traces.jsonl`, each line with its step (so a resume cuts the file there). */
export function appendTraces(runDir: string, step: number, traces: readonly EpisodeTrace[]): void {
  if (traces.length === 0) return;
  mkdirSync(runDir, { recursive: true });
  appendFileSync(path.join(runDir, TRACES_FILE), traces.map((trace) => `${JSON.stringify({ step, ...trace })}\n`).join(''));
}
