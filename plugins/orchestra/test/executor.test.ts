import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createTfjsPolicyBackend, type TfjsPolicyBackend } from '@drmas/plugin-backend-tfjs';
import { ModelRequestQueue } from '../src/index.js';
import { compareRunners, CountingEngine, workflowOf } from './engineRuns.js';
import { describeSlow } from '../../../test/support/describeSlow.js';

// The async executor on the real tiny model: what it samples, how it batches. Timeouts and traces: executorFailures.test.ts.
let backend: TfjsPolicyBackend;
beforeAll(async () => {
  backend = await createTfjsPolicyBackend({ model: 'tiny', seed: 0, runtime: 'wasm' });
});
afterAll(() => backend?.dispose());

const compare = async (name: string, roles: string[], tasks: number, maxNewTokens: number) =>
  compareRunners(backend, await workflowOf(backend, name, roles, maxNewTokens), tasks);

describe('the async executor samples what the lock-step runner samples with row streams', () => {
  test('math: same agents, steps, tokens, outcomes and turn scores', () => compare('math', ['solver', 'verifier'], 1, 4));
  test('majority_vote (K = 2): the K solver calls keep their seeds on the executor', () => compare('majority_vote', ['solver'], 1, 3));
});

describeSlow('the async executor against lock-step, more episodes (slow)', () => {
  test('math, 3 tasks x 2', () => compare('math', ['solver', 'verifier'], 3, 6));
  test('summary, 2 tasks x 2', () => compare('summary', ['solver', 'summarizer'], 2, 4));
  test('debate, 2 rounds, 2 tasks x 2', () => compare('debate', ['pro', 'con'], 2, 4));
});

describe('per-model request queues', () => {
  test('concurrent requests coalesce into one generate call, and each row samples what it samples alone', async () => {
    const counting = new CountingEngine(backend);
    const queue = new ModelRequestQueue(counting.asBackend(), { maxBatchSize: 8, maxWaitMs: 50, concurrency: 1 });
    const sampling = { temperature: 1, maxNewTokens: 5 };
    const prompts = [[11, 12, 13], [21, 22], [31, 32, 33, 34], [41]];
    // Each request has its own seed and row key, as agent calls of different episodes and steps do.
    const requests = prompts.map((prompt, i) => ({ prompt, sampling, seed: 1000 + 17 * i, rowKey: 3 * i }));
    const together = await Promise.all(requests.map((request) => queue.submit(request)));
    expect(counting.calls).toEqual([4]);
    expect(together.map((s) => s.batchRows)).toEqual([4, 4, 4, 4]);
    for (const [i, request] of requests.entries()) {
      const alone = await backend.generate({ prompts: [request.prompt], ...sampling, seed: request.seed, rowKeys: [request.rowKey] });
      expect(together[i]!.tokenIds).toEqual(alone.tokenIds[0]);
    }
    expect(queue.stats()).toMatchObject({ batches: 1, rows: 4 });
  });

  test('a full batch leaves at once; the rest waits for maxWaitMs; other sampling settings get their own batch', async () => {
    const counting = new CountingEngine(backend);
    const queue = new ModelRequestQueue(counting.asBackend(), { maxBatchSize: 3, maxWaitMs: 30, concurrency: 1 });
    const a = { temperature: 1, maxNewTokens: 2 };
    const b = { temperature: 0.5, maxNewTokens: 2 };
    const submit = (sampling: typeof a, i: number) => queue.submit({ prompt: [5 + i], sampling, seed: 1, rowKey: i });
    await Promise.all([...[0, 1, 2, 3, 4].map((i) => submit(a, i)), submit(b, 5), submit(b, 6)]);
    expect([...counting.calls].sort()).toEqual([2, 2, 3]);
    expect(queue.pending()).toBe(0);
  });
});
