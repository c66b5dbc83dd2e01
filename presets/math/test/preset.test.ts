import { afterAll, describe, expect, test } from '@jest/globals';
import { testSlow } from '../../../test/support/describeSlow.js';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createKernel, type UserConfig } from '@drmas/core';
import type { MathTask } from '@drmas/plugin-env-math';
import type { DemonstrationLine } from '@drmas/plugin-orchestra';
import { BASE_CHECKPOINT, buildMathBase, mathPreset, mathTeacher } from '../src/index.js';
import { writeMathDemonstrations } from '../src/buildBase.js';
import { arithmeticValue } from '../../../test/support/arithmetic.js';
import { runCli, type InfoReport } from '../../../test/support/cliRunner.js';
import { REPO_ROOT, TempProject } from '../../../test/support/tempProject.js';

const scratch = new TempProject('preset-math');
afterAll(() => scratch.dispose());

/** Small enough for a test: two prompts, two samples, short generations, one step, no evaluation. */
const SMALL: UserConfig = {
  rollout: { promptsPerStep: 2, samplesPerPrompt: 2 },
  eval: { atEnd: false },
  report: { html: false, progress: 'off' },
  trainer: { steps: 1, seed: 3 },
};

async function oneStep(config: UserConfig, runDir: string): Promise<Record<string, number>> {
  const { kernel } = await createKernel({ cwd: REPO_ROOT, inline: { presets: [mathPreset], ...SMALL, ...config } });
  await kernel.run({ runDir });
  return JSON.parse(readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n')[0]!) as Record<string, number>;
}

describe('the math teacher', () => {
  const task: MathTask = { id: 't1', question: 'What is 3 + 4?', answer: '7', dataSource: 'synthetic-arithmetic', split: 'train' };
  const teacher = mathTeacher(new Map([[task.question, task]]), { wrongRate: 0 });

  test('the Solver shows its steps and boxes the answer', () => {
    expect(teacher('Solve: What is 3 + 4?\n')).toMatch(/\\boxed\{7\}$/);
  });

  test('the Verifier approves a right answer and rejects a wrong one', () => {
    expect(teacher('Check: What is 3 + 4?\nThe output of "solver": 3+4=7. \\boxed{7}')).toMatch(/<verify>approve<\/verify>$/);
    expect(teacher('Check: What is 3 + 4?\nThe output of "solver": 3+4=8. \\boxed{8}')).toMatch(/<verify>reject<\/verify>$/);
  });

  test('with wrongRate 1, first attempts are wrong and retries right', () => {
    const sloppy = mathTeacher(new Map([[task.question, task]]), { wrongRate: 1 });
    expect(sloppy('Solve: What is 3 + 4?\n')).not.toMatch(/\\boxed\{7\}$/);
    expect(
      sloppy('Solve: What is 3 + 4?\nThe output of "solver": x \\boxed{8}\n\nThe output of "verifier": <verify>reject</verify>'),
    ).toMatch(/\\boxed\{7\}$/);
  });
});

describe('math demonstrations', () => {
  /** The value of `What is 8 * 10 + 47?` by plain JavaScript arithmetic, independent of the task generator. */
  const valueOf = (prompt: string) => {
    const expression = /Solve: What is ([-\d+*() ]+)\?/.exec(prompt)![1];
    return String(arithmeticValue(expression!));
  };

  test('the Solver only imitates right answers; the Verifier sees wrong ones and rejects them', async () => {
    const { file } = await writeMathDemonstrations({
      rounds: 2,
      promptsPerStep: 16,
      wrongRate: 0.5,
      seed: 1,
      workDir: scratch.path('demos'),
    });
    const demos = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as DemonstrationLine);
    const solver = demos.filter((d) => d.agent === 'solver');
    expect(solver.length).toBeGreaterThanOrEqual(32);
    for (const demo of solver) expect(/\\boxed\{([^{}]*)\}$/.exec(demo.response)?.[1]).toBe(valueOf(demo.prompt));
    const rejections = demos.filter((d) => d.agent === 'verifier' && d.response.endsWith('<verify>reject</verify>'));
    expect(rejections.length).toBeGreaterThan(0);
    // Each rejected first attempt is followed by a retry whose prompt carries the wrong answer and the rejection.
    expect(solver.filter((d) => d.prompt.includes('<verify>reject</verify>'))).toHaveLength(rejections.length);
  });
});

describe('@drmas/preset-math', () => {
  test('ships a base checkpoint of at most 8 MB', () => {
    const file = path.join(BASE_CHECKPOINT, 'model.safetensors');
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file).length).toBeLessThanOrEqual(8 * 1024 * 1024);
  });

  test('drmas info lists its agents, orchestra, environment and worker group', async () => {
    const { code, stdout } = await runCli(['info', '--json', '--config', 'examples/math/drmas.config.json']);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as InfoReport;
    expect(report.presets.map((p) => p.name)).toEqual(['@drmas/preset-math']);
    expect(report.sections.workflow).toMatchObject({ orchestra: 'math', agents: ['solver', 'verifier'], environment: 'math' });
    expect(report.sections.workerGroups).toEqual([
      expect.objectContaining({ id: 'policy', agents: ['solver', 'verifier'], backend: 'auto (onnx, else tfjs)' }),
    ]);
  });

  test('one training step, shared: both agents train one worker group', async () => {
    const line = await oneStep({}, scratch.path('shared'));
    expect(Number.isFinite(line['actor/policy/grad_norm'])).toBe(true);
    expect(line['agent/solver/turns']).toBeGreaterThanOrEqual(4);
  });

  test("an app's afterStep tap at the default stage reads the step's outcome statistics", async () => {
    const { kernel } = await createKernel({ cwd: REPO_ROOT, inline: { presets: [mathPreset], ...SMALL } });
    const seen: Array<{ mean: number | undefined; outcomes: number[] }> = [];
    kernel.hooks.afterStep.tapPromise('my-app', async ({ metrics, batch }) => {
      seen.push({ mean: metrics['outcome/mean'], outcomes: batch.trajectories.map((t) => t.outcome ?? 0) });
    });
    await kernel.run({ runDir: scratch.path('app-tap'), log: () => {} });
    expect(seen).toHaveLength(1);
    const { mean, outcomes } = seen[0]!;
    expect(outcomes).toHaveLength(4);
    expect(mean).toBeCloseTo(outcomes.reduce((a, b) => a + b, 0) / outcomes.length, 12);
  });

  test('one training step, non-shared: one worker group per agent', async () => {
    const line = await oneStep(
      {
        models: { solver: { model: BASE_CHECKPOINT }, verifier: { model: BASE_CHECKPOINT } },
        agents: { solver: { model: 'solver' }, verifier: { model: 'verifier' } },
      },
      scratch.path('non-shared'),
    );
    expect(
      Object.keys(line)
        .filter((k) => /^actor\/[^/]+\/grad_norm$/.test(k))
        .sort(),
    ).toEqual(['actor/solver/grad_norm', 'actor/verifier/grad_norm']);
    expect(Number.isFinite(line['actor/solver/grad_norm'])).toBe(true);
  });

  testSlow('one training step, heterogeneous: a Qwen2 solver and a Llama verifier (slow)', async () => {
    const line = await oneStep(
      {
        models: { qwen: { model: BASE_CHECKPOINT }, llama: { model: 'tiny', architecture: 'LlamaForCausalLM', seed: 1 } },
        agents: { solver: { model: 'qwen' }, verifier: { model: 'llama' } },
      },
      scratch.path('heterogeneous'),
    );
    expect(Number.isFinite(line['actor/qwen/grad_norm'])).toBe(true);
    expect(Number.isFinite(line['actor/llama/grad_norm'])).toBe(true);
  });

  testSlow('the base rebuild runs end to end on a few steps and writes a loadable checkpoint', async () => {
    const outDir = scratch.path('base');
    const code = await buildMathBase({
      rounds: 1,
      promptsPerStep: 4,
      epochs: 1,
      batchSize: 8,
      workDir: scratch.path('base-work'),
      outDir,
      io: { stdout: process.stdout, stderr: { write: () => true } as unknown as NodeJS.WritableStream, cwd: REPO_ROOT },
    });
    expect(code).toBe(0);
    const demos = readFileSync(scratch.path('base-work', 'demonstrations.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as DemonstrationLine);
    expect(new Set(demos.map((d) => d.agent))).toEqual(new Set(['solver', 'verifier']));
    expect(demos[0]?.prompt).toContain('Solve: ');
    const line = await oneStep({ models: { policy: { model: path.join(outDir, 'policy') } } }, scratch.path('rebuilt'));
    expect(Number.isFinite(line['actor/policy/grad_norm'])).toBe(true);

    // A second stage continues from the first one's checkpoint.
    let log = '';
    const stage2 = await buildMathBase({
      rounds: 1,
      promptsPerStep: 2,
      epochs: 1,
      batchSize: 8,
      seed: 1,
      from: path.join(outDir, 'policy'),
      workDir: scratch.path('base-work-2'),
      outDir: scratch.path('base-2'),
      io: {
        stdout: process.stdout,
        stderr: {
          write: (chunk: string) => {
            log += chunk;
            return true;
          },
        } as unknown as NodeJS.WritableStream,
        cwd: REPO_ROOT,
      },
    });
    expect(stage2).toBe(0);
    expect(log).toContain(`model policy: ${path.join(outDir, 'policy')} on tfjs`);
    expect(existsSync(scratch.path('base-2', 'policy', 'model.safetensors'))).toBe(true);
  });
});
