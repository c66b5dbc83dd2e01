import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from '@jest/globals';
import { runBin } from './cliRunner.js';
import type { TempProject } from './tempProject.js';

/** Settings that keep a one-step run small and quiet: no evaluation, no report. */
const ONE_STEP = ['trainer.steps=1', 'eval.atStart=false', 'eval.atEnd=false', 'report.html=false', 'report.progress=off'];

/**
 * Trains one step of `config` with the built CLI (as a user runs it) into `scratch/<name>`, with `settings` as `--set`
 * overrides after the one-step ones; expects a clean exit and returns the step's metrics line.
 */
export function trainOneStep(scratch: TempProject, name: string, config: string, settings: readonly string[]): Record<string, number> {
  const runDir = scratch.path(name);
  const set = [...ONE_STEP, ...settings].flatMap((s) => ['--set', s]);
  const { code, stderr } = runBin(['train', '--config', config, '--run-dir', runDir, ...set]);
  expect({ code, stderr: stderr.includes('error') ? stderr : '' }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n')[0]!) as Record<string, number>;
}
