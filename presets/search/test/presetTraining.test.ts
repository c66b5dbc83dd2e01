import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { testSlow } from '../../../test/support/describeSlow.js';
import { createKernel } from '@drmas/core';
import { PRESET_DIR } from '../src/buildBase.js';
import { searchPreset } from '../src/searchPreset.js';

// One training step of the preset on its shipped base checkpoint, in each way of assigning agents to models. The
// example configs are used as written, with the preset object in place of its name (the workspace link may be absent).
const REPO_ROOT = path.join(PRESET_DIR, '..', '..');
const EXAMPLES = path.join(REPO_ROOT, 'examples', 'search');
const scratchRoot = path.join(REPO_ROOT, '.drmas-cache', 'tests');
mkdirSync(scratchRoot, { recursive: true });
const scratch = mkdtempSync(path.join(scratchRoot, 'preset-search-train-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// At most 2 search steps keep prompts short, so the three runs fit in well under a minute.
const TINY_RUN = {
  env: { maxRounds: 2 },
  rollout: { promptsPerStep: 2, samplesPerPrompt: 2 },
  eval: { atEnd: false, atStart: false },
  report: { html: false, progress: 'off' },
};

async function oneStep(example: string): Promise<Record<string, number>> {
  const user = JSON.parse(readFileSync(path.join(EXAMPLES, example), 'utf8')) as Record<string, unknown>;
  const { kernel } = await createKernel({
    cwd: EXAMPLES,
    inline: { ...user, ...TINY_RUN, presets: [searchPreset], trainer: { ...(user.trainer as object), steps: 1, saveEvery: 0 } },
  });
  const runDir = path.join(scratch, example.replace(/\.json$/, ''));
  await kernel.run({ runDir, log: () => {} });
  const lines = readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n');
  return JSON.parse(lines.at(-1)!) as Record<string, number>;
}

function expectGroupsTrained(metrics: Record<string, number>, groups: string[]): void {
  for (const group of groups) expect(Number.isFinite(metrics[`actor/${group}/grad_norm`])).toBe(true);
  const trained = Object.keys(metrics)
    .filter((key) => /^actor\/[^/]+\/grad_norm$/.test(key))
    .map((key) => key.split('/')[1]);
  expect(trained.sort()).toEqual([...groups].sort());
}

describe('search preset: one training step on the base checkpoint', () => {
  test('shared: the three agents on one model', async () => {
    expectGroupsTrained(await oneStep('drmas.config.json'), ['policy']);
  });

  testSlow('non-shared: one model per agent', async () => {
    expectGroupsTrained(await oneStep('non-shared.json'), ['verifier', 'searcher', 'answerer']);
  });

  testSlow('heterogeneous: Qwen2 base for verifier and searcher, a Llama answerer', async () => {
    expectGroupsTrained(await oneStep('heterogeneous.json'), ['qwen', 'llama']);
  });
});
