import { expect } from '@jest/globals';
import { statSync } from 'node:fs';
import path from 'node:path';
import { runBin, type InfoReport } from './cliRunner.js';
import { REPO_ROOT } from './tempProject.js';

export { trainOneStep } from './trainStep.js';

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
