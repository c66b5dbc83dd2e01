import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createKernel, type TextCodec } from '@drmas/core';
import { createOnnxPolicyBackend, type OnnxPolicyBackend } from '@drmas/plugin-backend-onnx';
import envMathPlugin from '@drmas/plugin-env-math';
import orchestraPlugin, {
  createMathOrchestra,
  END,
  executorSection,
  GraphExecutor,
  PromptedAgent,
  Workflow,
  workflowGraph,
  type ExecutorSettings,
  type GraphContext,
} from '../src/index.js';

// A request that fails takes down its own episode only, recorded with the reason, on the real onnx engine: a prompt
// longer than the model's positions, and an empty prompt, which the engine refuses for the whole micro-batch.
let backend: OnnxPolicyBackend;
let workflow: Workflow;
beforeAll(async () => {
  backend = await createOnnxPolicyBackend({ model: 'tiny', seed: 0, provider: 'cpu' });
  const { kernel } = await createKernel({
    cwd: process.cwd(),
    inline: { plugins: [envMathPlugin(), orchestraPlugin()], env: { name: 'math', levels: [1], testSize: 4 } },
  });
  workflow = kernel.get(Workflow);
  await workflow.environment().init();
});
afterAll(() => backend?.dispose());

/** The tiny model's tokenizer as a base model's: no chat template, so a prompt is its text alone. */
function plainCodec(): TextCodec {
  const tokenizer = backend.tokenizer as TextCodec;
  return {
    encode: (text, options) => tokenizer.encode(text, options),
    decode: (ids, options) => tokenizer.decode(ids, options),
    eosTokenId: tokenizer.eosTokenId,
    vocabSize: tokenizer.vocabSize,
  };
}

/** An agent whose whole prompt is the `hint` variable the graph hands it. */
const hinter = new PromptedAgent({ role: 'hinter', prompt: '{hint}', tag: 'hint', sampling: { maxNewTokens: 3 } });

/** One node: the hinter, with the hint `hintFor(row index)`. */
function executor(hintFor: (row: number) => string, settings: Partial<Omit<ExecutorSettings, 'kind'>> = {}) {
  const graph = workflowGraph()
    .agent('hint', 'hinter', { variables: (ctx: GraphContext<unknown>) => ({ hint: hintFor(ctx.row.index) }) })
    .start('hint')
    .edge('hint', END)
    .build();
  const { kind: _kind, ...defaults } = executorSection.parse({});
  return new GraphExecutor({
    environment: workflow.environment(),
    orchestra: { ...createMathOrchestra(), graph },
    agents: new Map([['hinter', hinter]]),
    engineFor: () => ({ workerGroupId: 'policy', backend, codec: plainCodec() }),
    executor: { ...defaults, maxBatchSize: 3, maxWaitMs: 200, ...settings },
  });
}

const request = { tasks: [] as never[], samplesPerTask: 1, seed: 11, idPrefix: 's1r0' };
const tasks = (n: number) => ({ ...request, tasks: workflow.environment().batch(0, n).tasks as never[] });
const responses = (run: Awaited<ReturnType<GraphExecutor['run']>>) => run.trajectories.map((t) => t.turns.map((turn) => turn.responseIds));

describe('a failing request fails its episode, not the batch or the step', () => {
  test('an empty prompt: the engine refuses the micro-batch, its rows run alone, and only the empty one fails', async () => {
    const good = await executor(() => 'Give a hint.').run(tasks(3));
    expect(good.executor.models.policy).toMatchObject({ batches: 1, rows: 3, failedBatches: 0 });

    const run = await executor((row) => (row === 1 ? '' : 'Give a hint.')).run(tasks(3));
    expect(run.traces.map((t) => t.status)).toEqual(['completed', 'failed', 'completed']);
    expect(run.traces[1]!.failure).toMatchObject({ reason: 'llm_failed', node: 'hint' });
    expect(run.traces[1]!.failure!.message).toContain('prompt 0 is empty');
    expect(run.trajectories[1]!.info?.failure).toMatchObject({ reason: 'llm_failed' });
    expect(run.executor.failed).toEqual({ llm_failed: 1 });
    // The batch of three failed, then each row ran alone: 1 + 3 calls.
    expect(run.executor.models.policy).toMatchObject({ batches: 4, failedBatches: 1 });
    // Rows sample from their own streams: the rows that completed drew what they drew in the batch without a bad row.
    const [first, , third] = responses(run);
    const [goodFirst, , goodThird] = responses(good);
    expect(first).toEqual(goodFirst);
    expect(third).toEqual(goodThird);
    expect(first![0]!.length).toBeGreaterThan(0);
  });

  test("a prompt longer than the model's 2,048 positions fails that episode before it reaches the engine", async () => {
    const run = await executor((row) => (row === 0 ? 'word '.repeat(3000) : 'Give a hint.')).run(tasks(3));
    expect(run.traces.map((t) => t.failure?.reason)).toEqual(['llm_failed', undefined, undefined]);
    expect(run.traces[0]!.failure!.message).toMatch(/agent hinter's request failed: .*exceeds the 2,048 positions of model policy/);
    expect(run.executor.models.policy).toMatchObject({ batches: 1, rows: 2 });
  });

  test('when every episode fails so, the step stops with the error: a setup too long for the model, not an episode', async () => {
    await expect(executor(() => 'word '.repeat(3000)).run(tasks(2))).rejects.toMatchObject({
      code: 'LIMIT_EXCEEDED',
      key: 'agents.hinter.prompt',
    });
  });
});
