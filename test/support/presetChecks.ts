import { expect } from '@jest/globals';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { runBin, type InfoReport } from './cliRunner.js';
import { REPO_ROOT } from './tempProject.js';

/** What a preset's tests check with the built CLI, as a user runs it: `drmas info`, the base checkpoint, one step. */

/** `drmas info --json` of a config, checked to succeed with nothing on stderr. */
export function infoOf(config: string): InfoReport {
  const { code, stdout, stderr } = runBin(['info', '--json', '--config', config]);
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(stdout) as InfoReport;
}

/** Bytes of `presets/<preset>/checkpoints/base/policy/model.safetensors`. */
export function baseCheckpointBytes(preset: string): number {
  return statSync(path.join(REPO_ROOT, 'presets', preset, 'checkpoints', 'base', 'policy', 'model.safetensors')).size;
}

/**
 * Trains one step of `config` into `runDir` (no evaluation, no report) with the extra `--set` settings, checks the
 * run succeeded without an error on stderr, and returns the step's metrics line.
 */
export function trainOneStep(config: string, runDir: string, settings: readonly string[]): Record<string, number> {
  const set = [
    'trainer.steps=1',
    'eval.atStart=false',
    'eval.atEnd=false',
    'report.html=false',
    'report.progress=off',
    ...settings,
  ].flatMap((s) => ['--set', s]);
  const { code, stderr } = runBin(['train', '--config', config, '--run-dir', runDir, ...set]);
  expect({ code, stderr: stderr.includes('error') ? stderr : '' }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n')[0]!) as Record<string, number>;
}
