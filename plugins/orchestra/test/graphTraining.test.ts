import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from '../../../test/support/cliRunner.js';
import type { EpisodeTrace } from '../src/index.js';

// `drmas train` on the math preset's tiny model with the workflow on the async executor: one step, end to end.
const dir = mkdtempSync(path.join(tmpdir(), 'drmas-graph-train-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('a training step through a graph workflow', () => {
  test('math on the executor: episodes traced, micro-batched, rewarded from their traces, and trained', async () => {
    const runDir = path.join(dir, 'run');
    const result = await runCli([
      'train',
      '--config',
      'examples/math/drmas.config.json',
      ...['trainer.steps=1', 'eval.atStart=false', 'eval.atEnd=false', 'rollout.promptsPerStep=2', 'rollout.samplesPerPrompt=2']
        .concat(['agents.solver.sampling.maxNewTokens=8', 'agents.verifier.sampling.maxNewTokens=8'])
        .concat(['rollout.executor.kind=async', 'rollout.executor.maxBatchSize=3', 'reward.allocator=trace_outcome'])
        .flatMap((setting) => ['--set', setting]),
      '--run-dir',
      runDir,
    ]);
    expect(result.stderr).not.toContain('error');
    expect(result.code).toBe(0);
    const [metrics] = lines(path.join(runDir, 'metrics.jsonl'));
    expect(metrics).toMatchObject({ step: 1 });
    // Four solver calls at most three rows a batch: two calls at least for the first solve.
    expect(metrics!['rollout/executor/policy/generate_calls']).toBeGreaterThanOrEqual(2);
    expect(metrics!['rollout/executor/policy/batch_fill']).toBeGreaterThan(0);
    expect(metrics!['rollout/executor/policy/batch_fill']).toBeLessThanOrEqual(1);
    expect(Object.keys(metrics!).some((key) => key.startsWith('actor/'))).toBe(true);

    const traces = lines(path.join(runDir, 'traces.jsonl')) as unknown as Array<EpisodeTrace & { step: number }>;
    expect(traces).toHaveLength(4);
    for (const trace of traces) {
      expect(trace).toMatchObject({ step: 1, status: 'completed' });
      expect(trace.executions[0]).toMatchObject({ node: 'solver', kind: 'agent', agent: 'solver', modelId: 'policy', turn: 0 });
      expect(typeof trace.executions[0]!.input).toBe('string');
      expect(trace.executions.at(-1)).toMatchObject({ node: 'env.step', kind: 'env' });
    }
    // trace_outcome: every turn's reward is the episode's outcome less its invalid penalty (0.1 for both roles).
    for (const rollout of lines(path.join(runDir, 'rollouts.jsonl'))) {
      const turns = (rollout as { turns?: Array<{ reward: number; valid: boolean }> }).turns ?? [];
      for (const turn of turns) expect([0, 1]).toContain(turn.reward + (turn.valid ? 0 : 0.1));
    }
  });
});
