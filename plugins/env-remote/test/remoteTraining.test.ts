import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from '@jest/globals';
import { createKernel } from '@drmas/core';
import { runBin, startBin, type BinProcess } from '../../../test/support/cliRunner.js';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { REPO_ROOT } from '../../../test/support/tempProject.js';

const CONFIG = path.join(REPO_ROOT, 'examples/math/drmas.config.json');
const ONE_STEP = ['--set', 'trainer.steps=1', '--set', 'eval.atStart=false', '--set', 'eval.atEnd=false'];
const scratch = mkdtempSync(path.join(tmpdir(), 'drmas-remote-'));
const servers: BinProcess[] = [];

afterAll(async () => {
  for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGTERM');
  await Promise.all(servers.map((s) => s.exited));
  rmSync(scratch, { recursive: true, force: true });
});

/** `drmas serve` of the math preset's environment in a child process; its address once it listens. */
async function serveMath(): Promise<{ server: BinProcess; address: string }> {
  const server = startBin(['serve', '--config', CONFIG, '--environments', 'math', '--port', '0']);
  servers.push(server);
  await server.waitFor(/listening at \S+\n/, 60_000);
  return { server, address: /listening at (\S+)\n/.exec(server.output())![1]! };
}

function lines(file: string): Array<Record<string, unknown>> {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const remote = (urls: string[]) => [
  '--set',
  'plugins=["env-remote"]',
  '--set',
  'env.name=remote',
  '--set',
  `env.remote.urls=${JSON.stringify(urls)}`,
];

describeSlow('training on a remote environment (drmas serve in another process)', () => {
  it('trains a step of the math preset with the rewards of the same step on the local environment', async () => {
    const { address } = await serveMath();
    const localDir = path.join(scratch, 'local');
    const remoteDir = path.join(scratch, 'remote');
    const local = runBin(['train', '--config', CONFIG, ...ONE_STEP, '--run-dir', localDir]);
    expect(local.code).toBe(0);
    const viaServer = runBin(['train', '--config', CONFIG, ...ONE_STEP, ...remote([address]), '--run-dir', remoteDir]);
    expect(viaServer.stderr).not.toContain('error');
    expect(viaServer.code).toBe(0);
    // Equal by construction: the server builds the math environment from the same config (seed 0, levels 1-2,
    // checkSteps), so task i of the stream is the same problem; the prompt is built from the same question (the
    // variables travel with the task); the policy samples with the same seeds; and the server grades the same
    // answers with the same scorer. Every turn's response, reward and outcome must match, not only the means.
    const turn = (l: Record<string, unknown>) => [l.trajectoryId, l.taskId, l.agent, l.response, l.reward, l.outcome];
    const localTurns = lines(path.join(localDir, 'rollouts.jsonl')).map(turn);
    expect(localTurns.length).toBeGreaterThan(16);
    expect(lines(path.join(remoteDir, 'rollouts.jsonl')).map(turn)).toEqual(localTurns);
    const [l] = lines(path.join(localDir, 'metrics.jsonl'));
    const [r] = lines(path.join(remoteDir, 'metrics.jsonl'));
    for (const key of ['reward/mean', 'outcome/mean', 'outcome/synthetic-arithmetic/mean']) expect(r![key]).toBe(l![key]);
    expect(r!['env/remote_failed']).toBe(0);
  });

  it('records the episodes of a server killed between steps as failed and finishes the run', async () => {
    const [a, b] = [await serveMath(), await serveMath()];
    const runDir = path.join(scratch, 'killed');
    const { kernel } = await createKernel({
      cwd: REPO_ROOT,
      configPath: CONFIG,
      overrides: [
        'trainer.steps=2',
        'eval.atStart=false',
        'eval.atEnd=false',
        'plugins=["env-remote"]',
        'env.name=remote',
        `env.remote.urls=${JSON.stringify([a.address, b.address])}`,
        'env.remote.backoffMs=10',
      ],
    });
    kernel.hooks.afterStep.tapPromise('test: kill server b', async (result) => {
      if (result.step !== 1) return;
      b.server.child.kill('SIGKILL');
      await b.server.exited;
    });
    await kernel.run({ runDir });
    const [first, second] = lines(path.join(runDir, 'metrics.jsonl'));
    // Round-robin: every other episode (16 of 32) ran on b, and all of those failed at step 2.
    expect(first!['env/remote_failed']).toBe(0);
    expect(second!['env/remote_failed']).toBe(0.5);
    const failed = lines(path.join(runDir, 'rollouts.jsonl')).filter((l) => l.failed === true);
    // rollouts.jsonl logs the first 16 trajectories of a step (trainer.logRollouts): 8 of them were b's.
    expect(failed).toHaveLength(8);
    for (const line of failed) {
      expect(line.step).toBe(2);
      expect(line.turns).toBe(0);
      expect(line.failure).toEqual({
        reason: 'environment_failed',
        message: expect.stringMatching(new RegExp(`^server ${b.address}: CreateSessions failed with UNAVAILABLE after 4 attempts`)),
      });
    }
  });
});
