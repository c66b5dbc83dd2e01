import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { readDemonstrations } from '@drmas/plugin-trainer';
import { arithmeticValue } from '../../../test/support/arithmetic.js';
import { runBin, runCli } from '../../../test/support/cliRunner.js';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { TempProject } from '../../../test/support/tempProject.js';

/**
 * `drmas collect` on the math preset (its base checkpoint, a warmed-up tiny model) writes what `drmas sft` reads, and
 * collect, then sft, then train run end to end as the trainer's README documents them.
 */

const project = new TempProject('collect').write({
  'drmas.config.json': {
    presets: ['math'],
    // Two prompts of two samples per rollout step; tfjs samples (onnx needs no install here, but one engine is enough).
    rollout: { promptsPerStep: 2, samplesPerPrompt: 2 },
    models: { policy: { rollout: 'tfjs' } },
    trainer: { outputDir: 'runs', seed: 1 },
    report: { html: false, progress: 'off' },
  },
});
afterAll(() => project.dispose());

interface Line {
  agent: string;
  prompt: string;
  response: string;
  reward: number;
}
const linesOf = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);

/** The question of a solver prompt and the last \boxed{} answer of its response. */
function solverAnswer(line: Line): { expected: number; answer: number | undefined } {
  const question = /Solve: What is (.+)\?/.exec(line.prompt)![1]!;
  const boxed = [...line.response.matchAll(/\\boxed\{(-?\d+)\}/g)].at(-1);
  return { expected: arithmeticValue(question), answer: boxed ? Number(boxed[1]) : undefined };
}

describe('drmas collect', () => {
  test('writes each agent turn of N episodes as a line drmas sft reads: solver and verifier prompts as the preset sends them', async () => {
    const result = await runCli(['collect', '--episodes', '3', '--out', 'all.jsonl', '--run-dir', 'runs/collect-all'], project.dir);
    expect(result.code).toBe(0);
    // 3 episodes: one rollout step of 4 episodes, cut to 3.
    expect(result.stderr).toMatch(/collect step 1: 3\/3 episodes, 3 kept/);
    expect(result.stderr).not.toMatch(/collect step 2/);
    const demos = readDemonstrations(project.path('all.jsonl'));
    const lines = linesOf(project.path('all.jsonl'));
    expect(demos).toHaveLength(lines.length);
    // Every episode starts with a solver turn; the verifier answers each solver turn (the math orchestra).
    const solver = lines.filter((l) => l.agent === 'solver');
    expect(solver.length).toBeGreaterThanOrEqual(3);
    expect(lines.filter((l) => l.agent === 'verifier')).toHaveLength(solver.length);
    for (const line of lines) {
      expect(line.prompt).toMatch(
        line.agent === 'solver' ? /^<\|im_start\|>user\nSolve: What is / : /^<\|im_start\|>user\nCheck: What is /,
      );
      expect([0, 1]).toContain(line.reward);
    }
    // An episode whose outcome is 1 has its solver's last answer right (checked by JavaScript's arithmetic).
    for (const line of solver.filter((l) => l.reward === 1)) {
      const { expected, answer } = solverAnswer(line);
      expect(answer).toBe(expected);
    }
  }, 120_000);

  test('--episodes is required and --out must be writable, before any model loads', async () => {
    const missing = await runCli(['collect', '--out', 'x.jsonl'], project.dir);
    expect(missing.stderr).toMatch(/error INVALID_ARGUMENT \(--episodes\): --episodes is required/);
    const unwritable = await runCli(['collect', '--episodes', '1', '--out', '/proc/drmas/x.jsonl'], project.dir);
    expect(unwritable.code).toBe(1);
    expect(unwritable.stderr).toMatch(/error OUTPUT_UNWRITABLE \(--out\): cannot write the output folder \/proc\/drmas/);
    expect(unwritable.stderr).not.toMatch(/model policy/);
  });
});

describeSlow('collect, then sft, then train (the math preset, end to end)', () => {
  test('successful episodes only (--min-reward 1), all with right answers; sft warms up on them; train resumes from the sft model', () => {
    const collect = runBin(
      ['collect', '--episodes', '48', '--out', 'good.jsonl', '--min-reward', '1', '--set', 'rollout.promptsPerStep=8'],
      project.dir,
      300_000,
    );
    expect(collect.code).toBe(0);
    const lines = linesOf(project.path('good.jsonl'));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.reward).toBe(1);
    for (const line of lines.filter((l) => l.agent === 'solver')) {
      const { expected, answer } = solverAnswer(line);
      expect(answer).toBe(expected);
    }
    const sft = runBin(
      ['sft', '--data', 'good.jsonl', '--epochs', '1', '--batch-size', '4', '--lr', '1e-4', '--out', 'sft'],
      project.dir,
      300_000,
    );
    expect(sft.code).toBe(0);
    expect(sft.stderr).toContain(`over ${lines.length} demonstrations`);
    expect(existsSync(project.path('sft', 'policy', 'model.safetensors'))).toBe(true);
    const train = runBin(
      [
        'train',
        '--set',
        `models.policy.model=${project.path('sft', 'policy')}`,
        '--set',
        'trainer.steps=1',
        '--set',
        'eval.atEnd=false',
        '--run-dir',
        'runs/rl',
      ],
      project.dir,
      300_000,
    );
    expect(train.code).toBe(0);
    expect(train.stderr).toContain(`model policy: ${project.path('sft', 'policy')}`);
    expect(existsSync(project.path('runs', 'rl', 'checkpoints', 'step-000001'))).toBe(true);
  }, 900_000);
});
