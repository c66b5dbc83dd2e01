import { describe, expect, test } from '@jest/globals';
import { MathEnvironment } from '@drmas/plugin-env-math';
import { createCoryOrchestra, OrchestraRunner, PromptedAgent, type Agent } from '../src/index.js';
import { ScriptedBackend } from './fixtures.js';

/** A script given the prompt, the task's index and its right answer. */
type CoryScript = (prompt: string, task: number, answer: string) => string;

/** Two math tasks; the pioneer and the observer each sample from a scripted backend of their own. */
async function coryRun(pioneer: CoryScript, observer: CoryScript) {
  const environment = new MathEnvironment({ seed: 3, levels: [1], testSize: 4 });
  await environment.init();
  const { tasks } = environment.batch(0, 2);
  const taskOf = (prompt: string) => tasks.findIndex((t) => prompt.includes(t.question));
  const answerOf = (prompt: string) => String(tasks[taskOf(prompt)]!.answer);
  const orchestra = createCoryOrchestra();
  const backends = {
    pioneer: new ScriptedBackend('pioneer', (p) => pioneer(p, taskOf(p), answerOf(p))),
    observer: new ScriptedBackend('observer', (p) => observer(p, taskOf(p), answerOf(p))),
  };
  const agents = new Map<string, Agent>(Object.entries(orchestra.agents).map(([role, o]) => [role, new PromptedAgent({ role, ...o })]));
  const runner = new OrchestraRunner({
    environment,
    orchestra,
    agents,
    settings: {},
    engineFor: (agentId) => {
      const backend = backends[agentId as keyof typeof backends];
      return { workerGroupId: agentId, backend, codec: backend.codec };
    },
  });
  const run = await runner.run({ tasks, samplesPerTask: 1, seed: 1, idPrefix: 't' });
  return { run, tasks, backends };
}

describe('cory orchestra (pioneer, then observer)', () => {
  test("the observer's prompt holds the task and the pioneer's answer; the pioneer's holds no other answer", async () => {
    const { run, backends } = await coryRun(
      (_p, task) => `<think>first</think> \\boxed{${task === 0 ? 11 : 22}}`,
      () => '\\boxed{0}',
    );
    for (const trajectory of run.trajectories) expect(trajectory.turns.map((t) => t.agentId)).toEqual(['pioneer', 'observer']);
    const observerPrompts = backends.observer.requests.flatMap((r) => r.prompts.map((ids) => backends.observer.codec.decode(ids)));
    expect(observerPrompts).toHaveLength(2);
    const pioneerAnswers = run.trajectories.map((t) => t.turns[0]!.responseText);
    observerPrompts.forEach((prompt) => {
      const answer = pioneerAnswers.find((a) => prompt.includes(`The output of "pioneer": ${a}`));
      expect(answer).toBeDefined();
    });
    const pioneerPrompts = backends.pioneer.requests.flatMap((r) => r.prompts.map((ids) => backends.pioneer.codec.decode(ids)));
    for (const prompt of pioneerPrompts) expect(prompt).not.toContain('The output of');
  });

  test('collective reward: both turns score r_pioneer + r_observer; the outcome is the pioneer’s answer', async () => {
    // Task 0: pioneer right, observer wrong: 1 + 0; task 1: both right: 2. Then task 0 both wrong: 0; task 1 pioneer
    // wrong, observer right: 1 (the observer's right answer counts for the pioneer's turn too).
    const again = async (p: (task: number) => boolean, o: (task: number) => boolean) => {
      const { run } = await coryRun(
        (_prompt, task, answer) => `\\boxed{${p(task) ? answer : '-999'}}`,
        (_prompt, task, answer) => `\\boxed{${o(task) ? answer : '-999'}}`,
      );
      return {
        scores: run.trajectories.map((t) => t.turns.map((turn) => turn.info?.turnScore)),
        outcomes: run.trajectories.map((t) => t.outcome),
      };
    };
    expect(
      await again(
        () => true,
        (task) => task === 1,
      ),
    ).toEqual({
      scores: [
        [1, 1],
        [2, 2],
      ],
      outcomes: [1, 1],
    });
    expect(
      await again(
        () => false,
        (task) => task === 1,
      ),
    ).toEqual({
      scores: [
        [0, 0],
        [1, 1],
      ],
      outcomes: [0, 0],
    });
  });
});
