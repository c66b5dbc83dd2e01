import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from '@jest/globals';
import { runBin } from './cliRunner.js';
import { ONE_QUIET_STEP, setFlags } from './runSettings.js';

/**
 * Trains one step of `config` with the built CLI (as a user runs it) into `runDir` (no evaluation, no report), with
 * `settings` as `--set` overrides after the one-step ones; expects a clean exit without an error on stderr and returns
 * the step's metrics line.
 */
export function trainOneStep(config: string, runDir: string, settings: readonly string[]): Record<string, number> {
  const { code, stderr } = runBin(['train', '--config', config, '--run-dir', runDir, ...setFlags([...ONE_QUIET_STEP, ...settings])]);
  expect({ code, stderr: stderr.includes('error') ? stderr : '' }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n')[0]!) as Record<string, number>;
}
