import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { createKernel } from '@drmas/core';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { PRESET_DIR } from '../src/buildBase.js';
import { searchPreset } from '../src/searchPreset.js';

// The setting examples/drmas-vs-grpo/README.md chose for Dr. MAS against GRPO (M-ASK with mask_f1: agents whose reward
// distributions differ), shared and non-shared: each config loads as written, and (slow) trains one short step with
// the per-agent diagnostics it turns on.
const REPO_ROOT = path.join(PRESET_DIR, '..', '..');
const FOLDER = path.join(REPO_ROOT, 'examples', 'drmas-vs-grpo');
const ROLES = ['planner', 'searcher', 'summarizer', 'updater', 'answerer'];
const scratchRoot = path.join(REPO_ROOT, '.drmas-cache', 'tests');
mkdirSync(scratchRoot, { recursive: true });
const scratch = mkdtempSync(path.join(scratchRoot, 'drmas-vs-grpo-configs-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const read = (file: string) => JSON.parse(readFileSync(path.join(FOLDER, file), 'utf8')) as Record<string, object>;

/** The config as written, the preset object in place of its name, with `over` on top (a short run). */
async function kernelOf(file: string, over: Record<string, unknown> = {}) {
  const user = read(file);
  return createKernel({ cwd: FOLDER, inline: { ...user, presets: [searchPreset], ...over } });
}

describe('the chosen Dr. MAS vs GRPO setting: M-ASK with mask_f1', () => {
  test.each([
    ['m-ask.shared.json', ['policy']],
    ['m-ask.non-shared.json', ROLES],
  ])(
    '%s loads: the five agents on %j, mask_f1, 4 x 4 episodes a step, the rollout log-probs as old, per-agent diagnostics on (inflation every 10 steps)',
    async (file, models) => {
      const { kernel } = await kernelOf(file);
      const config = kernel.config as unknown as {
        agents: Record<string, { model: string }>;
        reward: { allocator: string };
        rollout: { promptsPerStep: number; samplesPerPrompt: number };
        trainer: { agentDiagnostics: unknown; saveEvery: number; oldLogProbs: string };
      };
      expect(config.reward.allocator).toBe('mask_f1');
      expect(config.rollout).toMatchObject({ promptsPerStep: 4, samplesPerPrompt: 4 });
      expect(config.trainer).toMatchObject({ agentDiagnostics: { inflationEvery: 10 }, saveEvery: 5, oldLogProbs: 'rollout' });
      expect([...new Set(ROLES.map((role) => config.agents[role]!.model))].sort()).toEqual([...models].sort());
    },
  );
});

describeSlow('the chosen Dr. MAS vs GRPO setting trains one short step (slow)', () => {
  test.each(['m-ask.shared.json', 'm-ask.non-shared.json'])('%s: every acting agent gets its mechanism metrics', async (file) => {
    const user = read(file);
    const { kernel } = await kernelOf(file, {
      rollout: { ...user.rollout, promptsPerStep: 1, samplesPerPrompt: 2 },
      orchestra: { ...user.orchestra, maxLoops: 1 },
      eval: { atStart: false, atEnd: false },
      report: { html: false, progress: 'off' },
      trainer: { ...user.trainer, steps: 1, saveEvery: 0 },
    });
    const runDir = path.join(scratch, file);
    await kernel.run({ runDir, log: () => {} });
    const metrics = JSON.parse(readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').at(-1)!) as Record<
      string,
      number
    >;
    for (const role of ['planner', 'searcher', 'answerer']) {
      expect(metrics[`agent/${role}/reward_std`]).toBeGreaterThanOrEqual(0);
      expect(metrics[`agent/${role}/grad_norm`]).toBeGreaterThanOrEqual(0);
    }
  });
});
