import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { runBin, startBin, type BinProcess } from '../../../test/support/cliRunner.js';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { TempProject } from '../../../test/support/tempProject.js';

// `drmas train` on the math preset with models.policy.rollout a vLLM server, which is a `drmas gateway` child
// process on the same base checkpoint; the same run with the trainer's own engine sampling is the reference. Needs
// the built CLI (`npx tsc -b`).
const SERVED = 'plugins/rollout-remote/test/fixtures/served.config.json';
const LISTENING = /gateway listening at (http:\/\/127\.0\.0\.1:\d+)\/v1/;

describeSlow('drmas train with a remote (vLLM-dialect) rollout engine', () => {
  let gateway: BinProcess;
  let url: string;
  let project: TempProject;

  beforeAll(async () => {
    project = new TempProject('remote-train');
    gateway = startBin(['gateway', '--config', SERVED, '--port', '0']);
    await gateway.waitFor(LISTENING, 60_000);
    url = LISTENING.exec(gateway.output())![1]!;
  }, 90_000);
  afterAll(async () => {
    gateway?.child.kill('SIGINT');
    await gateway?.exited;
    project?.dispose();
  });

  const config = (rollout: object | undefined) => ({
    presets: ['math'],
    plugins: ['rollout-remote'],
    models: { policy: { backend: 'tfjs', ...(rollout ? { rollout } : {}) } },
    rollout: { promptsPerStep: 2, samplesPerPrompt: 2 },
    eval: { atStart: false, atEnd: false },
    trainer: { steps: 2, seed: 0, saveEvery: 0 },
  });
  const lines = (file: string) =>
    readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  test('two steps sample on the server what the local engine samples, and each update reaches the server', async () => {
    project.write({ 'local.json': config(undefined), 'remote.json': config({ kind: 'vllm', url, retries: 1 }) });
    const local = runBin(['train', '--config', project.path('local.json'), '--run-dir', project.path('local')], project.dir, 300_000);
    expect(local.code).toBe(0);
    const remote = runBin(['train', '--config', project.path('remote.json'), '--run-dir', project.path('remote')], project.dir, 300_000);
    expect(remote.stderr).toContain(`samples on vllm at ${url}`);
    expect(remote.code).toBe(0);
    // The initial weights, then one push after each of the two updates.
    expect(remote.stderr).toContain('weights policy-v0 loaded');
    expect(remote.stderr).toContain('weights policy-v2 loaded');
    const version = (await (await fetch(`${url}/weight_info`)).json()) as { weight_version: string };
    expect(version.weight_version).toBe('policy-v2');

    // Step 2 samples from the weights step 1 trained, on both sides: same rollouts, same metrics.
    const want = lines(project.path('local', 'rollouts.jsonl'));
    const got = lines(project.path('remote', 'rollouts.jsonl'));
    expect(got.length).toBe(want.length);
    const sampled = (row: Record<string, unknown>) => [row.step, row.response, row.responseTokens, row.finishReason, row.reward];
    expect(want.length).toBeGreaterThan(8);
    expect(got.map(sampled)).toEqual(want.map(sampled));
    const metrics = (dir: string) => lines(project.path(dir, 'metrics.jsonl'));
    const [localSteps, remoteSteps] = [metrics('local'), metrics('remote')];
    expect(remoteSteps).toHaveLength(2);
    for (const key of ['reward/mean', 'advantage/std', 'actor/policy/pg_loss', 'actor/policy/grad_norm']) {
      remoteSteps.forEach((step, i) => {
        const want = localSteps[i]![key] as number | undefined;
        // A step whose rows all have zero advantage logs no loss, on both sides.
        if (want === undefined) expect(step[key]).toBeUndefined();
        else expect(step[key] as number).toBeCloseTo(want, 4);
      });
    }
    expect(localSteps[0]!['actor/policy/grad_norm']).toBeGreaterThan(0);
    // The server's sampling log-probs are the trainer's scores of the same ids, at step 2 too (after the first push).
    for (const step of remoteSteps) expect(step['rollout/policy/probs_diff_max'] as number).toBeLessThan(1e-3);
    expect(path.isAbsolute(project.path('remote', 'rollout-weights', 'policy', 'v2'))).toBe(true);
  }, 600_000);
});
