import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, test } from '@jest/globals';
import { createKernel, DrmasError, scoreSequences, WorkerGroups, type StepResult } from '@drmas/core';
import { sessionTrajectory, type CapturedTurn } from '../src/index.js';
import { runCli } from '../../../test/support/cliRunner.js';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { TempProject } from '../../../test/support/tempProject.js';

// A two-agent system written with the `openai` client alone (test/fixtures/mathAgents.mjs), trained by the math
// preset's kernel through the gateway plugin: 2 tasks x 2 episodes, one step, no evaluation.
const CONFIG = 'plugins/gateway/test/fixtures/agentic.config.json';
const project = new TempProject('gateway-agentic');
afterAll(() => project.dispose());

describeSlow('the agentic rollout in a training run', () => {
  test("one step: each episode's calls are its trajectory, with the engine's ids and log-probs, grouped per task, trained", async () => {
    const { kernel } = await createKernel({ cwd: process.cwd(), configPath: CONFIG });
    let result: StepResult | undefined;
    const scored: Array<{ sampled: number[]; scored: number[] }> = [];
    kernel.hooks.afterStep.tap('test', (step) => {
      result = step;
    });
    kernel.hooks.afterRollout.tapPromise('test', async (batch) => {
      // Teacher-forced scores of every captured turn on the engine that sampled it, before the update moves it.
      const engine = kernel.get(WorkerGroups).get('policy').rollout;
      const turns = batch.trajectories.flatMap((t) => t.turns);
      const { logProbs } = await scoreSequences(
        engine,
        turns.map((t) => t.promptIds),
        turns.map((t) => t.responseIds),
      );
      turns.forEach((turn, i) => scored.push({ sampled: turn.logProbs, scored: logProbs[i]! }));
      return batch;
    });
    await kernel.run({ runDir: project.path('run'), log: () => undefined });

    const trajectories = result!.rollout.trajectories;
    expect(trajectories.map((t) => t.groupId)).toEqual(['s1r0-p0', 's1r0-p0', 's1r0-p1', 's1r0-p1']);
    for (const trajectory of trajectories) {
      expect(trajectory.turns.map((t) => t.agentId)).toEqual(['solver', 'verifier']);
      expect(trajectory.turns.every((t) => t.workerGroupId === 'policy' && t.responseIds.length === t.logProbs.length)).toBe(true);
      expect([0, 1]).toContain(trajectory.outcome);
    }
    // The tasks of a group are one task; both groups' episodes share none.
    expect(new Set(trajectories.map((t) => t.taskId)).size).toBe(2);
    // Sampling log-probs are the policy's: teacher-forced scores of the same ids agree (1e-4).
    expect(scored).toHaveLength(8);
    for (const { sampled, scored: teacher } of scored) sampled.forEach((lp, i) => expect(Math.abs(lp - teacher[i]!)).toBeLessThan(1e-4));
    // The normal path ran on them: rewards allocated, advantages computed, an update made.
    expect(result!.batch.rows).toBe(8);
    expect(result!.rollout.trajectories.flatMap((t) => t.turns).every((t) => typeof t.reward === 'number')).toBe(true);
    const line = JSON.parse(readFileSync(project.path('run', 'metrics.jsonl'), 'utf8').trim()) as Record<string, number>;
    expect(line['rollout/agent_errors']).toBe(0);
    expect(Object.keys(line).filter((key) => key.includes('grad_norm')).length).toBeGreaterThan(0);
  });
});

describe('the agentic rollout', () => {
  test('examples/ai-sdk-agents: the README opens with one command, whose config validates and whose agent loads', async () => {
    const readme = readFileSync('examples/ai-sdk-agents/README.md', 'utf8');
    const command = /```bash\n(.*)\n```/.exec(readme)?.[1];
    expect(command).toBe('npm install && npm run build && npx drmas train --config examples/ai-sdk-agents/drmas.config.json');
    const { kernel } = await createKernel({ cwd: process.cwd(), configPath: 'examples/ai-sdk-agents/drmas.config.json' });
    expect(kernel.config.trainer.steps).toBe(60);
    const agent = (await import('../../../examples/ai-sdk-agents/agents.mjs')) as { default: unknown };
    expect(typeof agent.default).toBe('function');
  });

  test('a config without gateway.agent is refused at validate, naming the key', async () => {
    const result = await runCli(['train', '--config', CONFIG, '--set', 'gateway.agent=', '--set', 'trainer.steps=1']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('gateway.agent');
  });

  test("a session's captured calls become one trajectory: turns in call order, rewards as turn scores, no agent refused", () => {
    const call = (agent: string | undefined, reward?: number): CapturedTurn => ({
      id: `chatcmpl-${agent}`,
      model: agent ?? 'policy',
      modelId: 'policy',
      agent,
      endpoint: 'chat.completions',
      promptIds: [1, 2],
      responseIds: [3, 4, 5],
      logProbs: [-0.5, -1, -2],
      temperature: 0.7,
      finishReason: 'stop',
      text: 'x',
      reward,
    });
    const task = { id: 't9', dataSource: 'synthetic' };
    const ids = { groupId: 's1r0-p0', trajectoryId: 's1r0-p0-n1' };
    const trajectory = sessionTrajectory(task, ids, [call('solver'), call('verifier', 1)], ['solver', 'verifier']);
    expect(trajectory).toMatchObject({ ...ids, taskId: 't9', dataSource: 'synthetic', done: false });
    expect(trajectory.turns.map((t) => [t.agentId, t.index, t.round, t.workerGroupId, t.temperature])).toEqual([
      ['solver', 0, 0, 'policy', 0.7],
      ['verifier', 1, 0, 'policy', 0.7],
    ]);
    expect(trajectory.turns[0]).toMatchObject({ promptIds: [1, 2], responseIds: [3, 4, 5], logProbs: [-0.5, -1, -2], valid: true });
    expect(trajectory.turns[0]!.info).toBeUndefined();
    expect(trajectory.turns[1]!.info).toEqual({ turnScore: 1 });
    const anonymous = (() => {
      try {
        return sessionTrajectory(task, ids, [call(undefined)], ['solver', 'verifier']);
      } catch (error) {
        return error;
      }
    })();
    expect(DrmasError.is(anonymous) && anonymous.key).toBe('gateway.agent');
    expect((anonymous as Error).message).toContain('without naming an agent');
  });
});
