import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { createKernel } from '@drmas/core';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { PRESET_DIR } from '../src/buildBase.js';
import { searchPreset } from '../src/searchPreset.js';

// One training step of each UnityMAS-O search workflow config on the preset's base checkpoint, on the async executor
// with its allocator: shared, separate and partly shared models. The configs are used as written (the preset object in
// place of its name), with a short run: one question, two episodes, short outputs, at most one search round.
const REPO_ROOT = path.join(PRESET_DIR, '..', '..');
const WORKFLOWS = path.join(REPO_ROOT, 'examples', 'workflows');
const scratchRoot = path.join(REPO_ROOT, '.drmas-cache', 'tests');
mkdirSync(scratchRoot, { recursive: true });
const scratch = mkdtempSync(path.join(scratchRoot, 'preset-search-workflows-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// Short outputs, but the Searcher's: the base checkpoint writes a query in some 20 tokens, and a round needs one.
const SHORT_ROLES = ['planner', 'summarizer', 'updater', 'answerer', 'decomposer', 'evidence'];
const TINY_RUN = {
  rollout: { promptsPerStep: 1, samplesPerPrompt: 2 },
  eval: { atEnd: false, atStart: false },
  report: { html: false, progress: 'off' },
};

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

async function oneStep(config: string) {
  const folder = path.join(WORKFLOWS, path.dirname(config));
  const user = JSON.parse(readFileSync(path.join(WORKFLOWS, config), 'utf8')) as {
    agents: Record<string, object>;
    orchestra: object;
    rollout: object;
    trainer: object;
  };
  const agents = Object.fromEntries(
    Object.entries(user.agents).map(([role, entry]) => [
      role,
      SHORT_ROLES.includes(role) ? { ...entry, sampling: { maxNewTokens: 6 } } : entry,
    ]),
  );
  const { kernel } = await createKernel({
    cwd: folder,
    inline: {
      ...user,
      ...TINY_RUN,
      agents,
      orchestra: { ...user.orchestra, maxLoops: 1 },
      rollout: { ...user.rollout, ...TINY_RUN.rollout },
      presets: [searchPreset],
      trainer: { ...user.trainer, steps: 1, saveEvery: 0 },
    },
  });
  const runDir = path.join(scratch, config.replace(/[/.]/g, '-'));
  await kernel.run({ runDir, log: () => {} });
  return { metrics: lines(path.join(runDir, 'metrics.jsonl')).at(-1)!, traces: lines(path.join(runDir, 'traces.jsonl')) };
}

async function expectTrained(config: string, groups: string[], firstNodes: string[]): Promise<void> {
  const { metrics, traces } = await oneStep(config);
  const trained = Object.keys(metrics)
    .filter((key) => /^actor\/[^/]+\/grad_norm$/.test(key) && Number.isFinite(metrics[key]))
    .map((key) => key.split('/')[1]);
  expect(trained.sort()).toEqual([...groups].sort());
  expect(traces).toHaveLength(2);
  for (const trace of traces as unknown as Array<{ status: string; executions: Array<{ node: string }> }>) {
    expect(trace.status).toBe('completed');
    expect(trace.executions.slice(0, firstNodes.length).map((e) => e.node)).toEqual(firstNodes);
  }
  for (const group of groups) expect(metrics[`rollout/executor/${group}/generate_calls`]).toBeGreaterThan(0);
}

const MASK_START = ['plan', 'score_plan', 'search'];
const QD_START = ['decompose', 'retrieve', 'evidence', 'answer'];

describe('search workflows train one step from their configs', () => {
  test('query-decomposition RAG, shared: the three agents on one model', async () => {
    await expectTrained('qd-rag/shared.config.json', ['policy'], QD_START);
  });
});

describeSlow('search workflows train one step from their configs (slow)', () => {
  test('query-decomposition RAG, separate: one model per agent', async () => {
    await expectTrained('qd-rag/separate.config.json', ['decomposer', 'evidence', 'answerer'], QD_START);
  });

  test('query-decomposition RAG, partly shared: decomposer and answerer share one model', async () => {
    await expectTrained('qd-rag/partly-shared.config.json', ['reasoning', 'evidence'], QD_START);
  });

  test('M-ASK, shared: the five agents on one model', async () => {
    await expectTrained('m-ask/shared.config.json', ['policy'], MASK_START);
  });

  test('M-ASK, separate: one model per agent', async () => {
    await expectTrained('m-ask/separate.config.json', ['planner', 'searcher', 'summarizer', 'updater', 'answerer'], MASK_START);
  });

  test('M-ASK, partly shared: planner and answerer share the reasoning model (UnityMAS-O default)', async () => {
    await expectTrained('m-ask/partly-shared.config.json', ['reasoning', 'search', 'summary', 'update'], MASK_START);
  });
});
