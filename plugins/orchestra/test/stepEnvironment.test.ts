import { describe, expect, test } from '@jest/globals';
import { createKernel, Environment, type EnvAction, type EnvTask, type Plugin } from '@drmas/core';
import orchestraPlugin from '../src/index.js';
import { roleOf, ScriptedBackend, stepCapture, testRunContext, testWorkerGroups, workerGroupsPlugin } from './fixtures.js';

interface SumTask extends EnvTask {
  answer: string;
}

interface LegacyEpisode {
  task: SumTask;
  done: boolean;
  outcome: number;
  stepScore?: number;
  rounds: number;
  observation(): string;
  variables(): Record<string, string>;
  metrics(): Record<string, number>;
}

/**
 * An environment as third parties wrote them before 0.2.0: `maxSteps`, `step` and `stepScore`, no `maxRounds`,
 * `advance` or `roundScore`. It records every episode object and action its `step` is handed.
 */
function legacyEnvironment(seen: Array<{ episode: LegacyEpisode; content: string }>) {
  const tasks: SumTask[] = [
    { id: 'q-0', dataSource: 'legacy', answer: '2' },
    { id: 'q-1', dataSource: 'legacy', answer: '3' },
  ];
  const created: LegacyEpisode[] = [];
  return {
    created,
    environment: {
      name: 'legacy',
      maxSteps: 2,
      init: async () => {},
      batch: (cursor: number, count: number) => ({
        tasks: Array.from({ length: count }, (_, i) => tasks[(cursor + i) % tasks.length]!),
        nextCursor: cursor + count,
      }),
      test: () => [],
      reset(task: SumTask): LegacyEpisode {
        const episode: LegacyEpisode = {
          task,
          done: false,
          outcome: 0,
          rounds: 0,
          observation: () => `Question: what is ${task.answer}?`,
          variables: () => ({ question: `What is ${task.answer}?` }),
          metrics() {
            return { rounds: this.rounds };
          },
        };
        created.push(episode);
        return episode;
      },
      async step(episodes: LegacyEpisode[], actions: EnvAction[]) {
        episodes.forEach((episode, i) => {
          const content = actions[i]!.content;
          seen.push({ episode, content });
          episode.rounds++;
          episode.stepScore = content.endsWith(`\\boxed{${episode.task.answer}}`) ? 1 : 0;
          episode.outcome = episode.stepScore;
          episode.done = episode.outcome === 1;
        });
      },
    },
  };
}

describe('an environment written against the names before 0.2.0', () => {
  test('runs its episodes through the orchestra, adapted once with one warning naming it', async () => {
    const seen: Array<{ episode: LegacyEpisode; content: string }> = [];
    const legacy = legacyEnvironment(seen);
    const provider: Plugin = { name: 'legacy-env', register: (ctx) => ctx.provide(Environment, 'legacy', legacy.environment) };
    // The solver answers seed % 5; the verifier always approves, so each round is one solver turn and one verifier turn.
    const backend = new ScriptedBackend('policy', (prompt, request) =>
      roleOf(prompt) === 'solver' ? `<think>ok</think> \\boxed{${request.seed! % 5}}` : '<verify>approve</verify>',
    );
    const capture = stepCapture();
    const warnings: string[] = [];
    const { kernel } = await createKernel({
      cwd: process.cwd(),
      warn: (message) => warnings.push(message),
      inline: {
        plugins: [
          provider,
          orchestraPlugin(),
          workerGroupsPlugin(testWorkerGroups({ solver: backend, verifier: backend })),
          capture.plugin,
        ],
        orchestra: { name: 'math' },
        trainer: { seed: 3 },
        env: { name: 'legacy' },
        rollout: { promptsPerStep: 2, samplesPerPrompt: 4 },
        reward: { allocator: 'per_turn' },
      },
    });
    await kernel.step(testRunContext(kernel), 1);
    await kernel.step(testRunContext(kernel), 2);

    expect(warnings).toEqual([
      'the environment "legacy" uses the names before 0.2.0 (maxSteps, step, stepScore), deprecated and read for one more ' +
        'release: rename them maxRounds, advance and roundScore',
    ]);
    // `step` got the episodes `reset` made (not wrappers), each at most maxSteps = 2 times, the second only when open.
    expect(legacy.created).toHaveLength(16);
    expect(seen.every(({ episode }) => legacy.created.includes(episode))).toBe(true);
    for (const episode of legacy.created) {
      const rounds = seen.filter((s) => s.episode === episode);
      expect(rounds.length).toBe(rounds[0]!.content.endsWith(`\\boxed{${episode.task.answer}}`) ? 1 : 2);
      expect(episode.rounds).toBe(rounds.length);
    }
    const trajectories = capture.last().rollout.trajectories;
    expect(trajectories).toHaveLength(8);
    for (const trajectory of trajectories) {
      const solverTurns = trajectory.turns.filter((t) => t.agentId === 'solver');
      // The acting turn of each round scores the episode's stepScore, read as roundScore: 1 only on a right answer.
      const right = solverTurns.map((t) => (t.responseText!.endsWith(`\\boxed{${trajectory.taskId === 'q-0' ? 2 : 3}}`) ? 1 : 0));
      expect(solverTurns.map((t) => t.reward)).toEqual(right);
      expect(trajectory.outcome).toBe(right.at(-1));
      expect(new Set(trajectory.turns.map((t) => t.round)).size).toBe(solverTurns.length);
    }
  });
});
