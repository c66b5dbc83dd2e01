import { afterAll, describe, expect, test } from '@jest/globals';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { runBin, startBin, type BinProcess, type InfoReport } from '../../../test/support/cliRunner.js';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { REPO_ROOT, TempProject } from '../../../test/support/tempProject.js';
import { trainOneStep } from '../../../test/support/trainStep.js';

// The built CLI, as a user runs it.
const scratch = new TempProject('preset-debate');
const servers: BinProcess[] = [];
afterAll(async () => {
  for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGTERM');
  await Promise.all(servers.map((s) => s.exited));
  scratch.dispose();
});

const trainStep = (name: string, settings: string[] = []) =>
  trainOneStep('examples/debate/drmas.config.json', scratch.path(name), [
    'trainer.seed=1',
    'rollout.promptsPerStep=2',
    'rollout.samplesPerPrompt=4',
    ...settings,
  ]);

describe('@drmas/preset-debate', () => {
  test('drmas info lists the debaters, the debate orchestra and environment', () => {
    const { code, stdout, stderr } = runBin(['info', '--json', '--config', 'examples/debate/drmas.config.json']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const report = JSON.parse(stdout) as InfoReport;
    expect(report.presets.map((p) => p.name)).toEqual(['@drmas/preset-debate']);
    expect(report.sections.workflow).toMatchObject({ orchestra: 'debate', agents: ['pro', 'con'], environment: 'debate' });
  });

  test('ships a base checkpoint of at most 8 MB', () => {
    const file = path.join(REPO_ROOT, 'presets', 'debate', 'checkpoints', 'base', 'policy', 'model.safetensors');
    expect(statSync(file).size).toBeLessThanOrEqual(8 * 1024 * 1024);
  });

  test('one training step from the base checkpoint: each debater rewarded by its rule score', () => {
    const line = trainStep('one-step');
    expect([line['agent/pro/turns'], line['agent/con/turns']]).toEqual([8, 8]);
    expect(Number.isFinite(line['actor/policy/grad_norm'])).toBe(true);
    // Every per_turn reward is a rule score: a weighted mean in [0, 1] (less 0.1 for an invalid turn).
    expect(line['reward/min']).toBeGreaterThanOrEqual(-0.1);
    expect(line['reward/max']).toBeLessThanOrEqual(1);
    // Verifiable: the outcome is whether the judged winners ended on the reference answer.
    expect(line['outcome/mean']).toBe(line['env/correct']);
  });
});

describeSlow('@drmas/preset-debate variants (slow)', () => {
  test('a judge model decides: its verdict is parsed, the judge is trained too', () => {
    const line = trainStep('judge', ['orchestra.judge=model', 'agents.judge.model=policy', 'agents.judge.sampling.maxNewTokens=16']);
    expect(line['agent/judge/turns']).toBe(8);
    expect(line['env/verdict_valid']).toBeGreaterThanOrEqual(0);
    expect(Number.isFinite(line['actor/policy/grad_norm'])).toBe(true);
  });

  test('motions, judged by the rules alone, with win/loss rewards', () => {
    const line = trainStep('motions', ['env.debate.tasks=motions', 'env.debate.reward=win', 'orchestra.rounds=2']);
    expect([line['agent/pro/turns'], line['agent/con/turns']]).toEqual([16, 16]);
    expect(line['env/correct']).toBeUndefined();
    // win/loss: the two debaters' rewards of a debate sum to 1 (k tied winners 1/k each), less invalid penalties.
    expect(line['reward/max']).toBeLessThanOrEqual(1);
  });

  test('over drmas serve: the same debates, and each debater the same reward, turn by turn', async () => {
    const server = startBin(['serve', '--config', 'examples/debate/drmas.config.json', '--environments', 'debate', '--port', '0']);
    servers.push(server);
    await server.waitFor(/listening at \S+\n/, 60_000);
    const address = /listening at (\S+)\n/.exec(server.output())![1]!;
    trainStep('local');
    trainStep('remote', ['plugins=["env-remote"]', 'env.name=remote', `env.remote.urls=${JSON.stringify([address])}`]);
    // The per-agent rewards come from the episode's metrics (reward_<agent>), which cross the server.
    const turns = (run: string) =>
      readFileSync(scratch.path(run, 'rollouts.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .map((l) => [l.trajectoryId, l.agent, l.response, l.reward, l.outcome]);
    expect(turns('local').length).toBe(16);
    expect(turns('remote')).toEqual(turns('local'));
  });
});
