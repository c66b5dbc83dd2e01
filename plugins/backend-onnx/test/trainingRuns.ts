import { readFileSync } from 'node:fs';
import path from 'node:path';
import { runBin } from '../../../test/support/cliRunner.js';

/** Runs of the built CLI in the onnx training tests, and the metrics lines they write. */

export type Line = Record<string, number>;

/** The metrics lines of a run directory, in step order. */
export function lines(runDir: string): Line[] {
  return readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
}

/** The line without its wall-clock figures. */
export function withoutTimings(line: Line): Line {
  return Object.fromEntries(Object.entries(line).filter(([k]) => !k.startsWith('timing/') && !k.startsWith('perf/')));
}

/** `drmas <args>` from the built bin, as a user runs it; throws with its stderr when it fails. */
export function train(args: string[]): void {
  const result = runBin(args);
  if (result.code !== 0) throw new Error(`drmas ${args.join(' ')} failed:\n${result.stderr}`);
}
