import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { EnvTask, TextCodec } from '@drmas/core';
import { createTfjsPolicyBackend, type TfjsPolicyBackend } from '@drmas/plugin-backend-tfjs';
import { SearchEnvironment } from '@drmas/plugin-env-search';
import { checkTurns, compareRunners, rolloutStep, workflowOf } from '../../../plugins/orchestra/test/engineRuns.js';
import { scriptedRunner, type Scripts } from '../../../plugins/orchestra/test/fixtures.js';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { createSearchOrchestra, SEARCH_ORCHESTRA_PROMPTS, searchWorkflowsPlugin } from '../src/index.js';

const agentsOf = (turns: { agentId: string }[]) => turns.map((t) => t.agentId);

async function searchSetup(scripts: Scripts, maxRounds = 4) {
  const environment = new SearchEnvironment({ seed: 1, entities: 40, maxRounds });
  await environment.init();
  const { tasks } = environment.batch(0, 2);
  return { tasks, ...scriptedRunner(createSearchOrchestra(), environment, scripts) };
}

describe('search orchestra (Verifier routes to Searcher or Answerer)', () => {
  const goldenOf = (tasks: EnvTask[], prompt: string) =>
    (tasks as unknown as { question: string; answers: string[] }[]).find((t) => prompt.includes(t.question))!.answers[0];

  test('no → Searcher, whose query the retriever runs; yes → Answerer, exact match outcome', async () => {
    let tasksRef: EnvTask[] = [];
    const { runner, backends, tasks } = await searchSetup({
      verifier: (p) => (p.includes('Doc 1(') ? '<think>enough</think><verify>yes</verify>' : '<verify>no</verify>'),
      searcher: () => '<think>look it up</think><search>founded</search>',
      answerer: (p) => `<answer>${goldenOf(tasksRef, p)}</answer>`,
    });
    tasksRef = tasks;
    const run = await runner.run({ tasks, samplesPerTask: 2, seed: 1, idPrefix: 't' });
    for (const t of run.trajectories) {
      expect(agentsOf(t.turns)).toEqual(['verifier', 'searcher', 'verifier', 'answerer']);
      expect(t.turns.map((turn) => turn.round)).toEqual([0, 0, 1, 1]);
      expect(t.turns[2]!.observation).toContain('<search>founded</search>\n<information>Doc 1');
      expect(t).toMatchObject({ done: true, outcome: 1 });
      expect(t.turns[3]!.info).toEqual({ turnScore: 1 });
      expect(t.info!.metrics).toEqual({ f1: 1, searches: 1, answered: 1 });
    }
    expect(backends.verifier!.batchSizes).toEqual([4, 4]);
    expect(backends.searcher!.batchSizes).toEqual([4]);
    expect(backends.answerer!.batchSizes).toEqual([4]);
  });

  test('the last step forces an answer even when the Verifier says no', async () => {
    const { runner, backends, tasks } = await searchSetup(
      {
        verifier: () => '<verify>no</verify>',
        searcher: () => '<search>anything</search>',
        answerer: () => '<answer>nobody</answer>',
      },
      2,
    );
    const run = await runner.run({ tasks, samplesPerTask: 1, seed: 1, idPrefix: 't' });
    for (const t of run.trajectories) {
      expect(agentsOf(t.turns)).toEqual(['verifier', 'searcher', 'verifier', 'answerer']);
      expect(t).toMatchObject({ done: true, outcome: 0 });
    }
    expect(backends.answerer!.requests[0]!.prompts.length).toBe(2);
  });

  test('mixed verdicts in one step: each branch is one batched call; an unparseable verdict searches', async () => {
    const { runner, backends, tasks } = await searchSetup({
      verifier: (p, _r, row) =>
        p.includes('<search>q</search>')
          ? '<verify>yes</verify>'
          : ['<verify>yes</verify>', 'garbage', '<verify>no</verify>', '<verify>yes</verify>'][row]!,
      searcher: () => '<search>q</search>',
      answerer: () => '<answer>a</answer>',
    });
    const run = await runner.run({ tasks, samplesPerTask: 2, seed: 1, idPrefix: 't' });
    expect(backends.verifier!.batchSizes).toEqual([4, 2]);
    expect(backends.answerer!.batchSizes).toEqual([2, 2]);
    expect(backends.searcher!.batchSizes).toEqual([2]);
    expect(run.trajectories[1]!.turns[0]).toMatchObject({ valid: false, invalidReason: 'missing <verify>' });
  });

  test('max steps: episodes whose answers stay invalid are cut, not done', async () => {
    const { runner, tasks } = await searchSetup(
      {
        verifier: () => '<verify>yes</verify>',
        answerer: () => 'I think it is Paris',
      },
      3,
    );
    const run = await runner.run({ tasks, samplesPerTask: 1, seed: 1, idPrefix: 't' });
    for (const t of run.trajectories) {
      expect(agentsOf(t.turns)).toEqual(['verifier', 'answerer', 'verifier', 'answerer', 'verifier', 'answerer']);
      expect(t).toMatchObject({ done: false, outcome: 0 });
      expect(t.turns[5]!.observation).toContain('My previous action is invalid');
    }
  });

  test("the orchestra's prompts read the observation, where the searches' information is", () => {
    for (const prompt of Object.values(SEARCH_ORCHESTRA_PROMPTS)) expect(prompt).toContain('{observation}');
  });
});

describe('the search orchestra on the tiny tfjs model', () => {
  let backend: TfjsPolicyBackend;
  beforeAll(async () => {
    backend = await createTfjsPolicyBackend({ model: 'tiny', seed: 0, runtime: 'wasm' });
  });
  afterAll(() => backend?.dispose());
  const roles = ['verifier', 'searcher', 'answerer'];

  test('one rollout step: the verifier routes each step; the episode ends by an answer or the step limit', async () => {
    const batch = await rolloutStep(
      backend,
      roles,
      { orchestra: { name: 'search' }, env: { name: 'search', entities: 40, maxRounds: 2 } },
      [searchWorkflowsPlugin],
    );
    expect(batch.trajectories).toHaveLength(4);
    checkTurns(batch, backend.tokenizer as TextCodec);
    for (const t of batch.trajectories) {
      expect(t.turns[0]!.agentId).toBe('verifier');
      expect(Math.max(...t.turns.map((x) => x.round))).toBeLessThanOrEqual(1);
    }
  });

  describeSlow('on the async executor (slow)', () => {
    test('2 tasks x 2, three steps: what lock-step samples, in no more generate calls', async () => {
      const workflow = await workflowOf(backend, 'search', roles, 6, {
        env: { name: 'search', entities: 40, maxRounds: 3 },
        plugins: [searchWorkflowsPlugin],
      });
      await compareRunners(backend, workflow, 2);
    });
  });
});
