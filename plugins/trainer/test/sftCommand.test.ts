import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync } from 'node:fs';
import { builtinTokenizer } from '@drmas/models';
import { runCli } from '../../../test/support/cliRunner.js';
import { TempProject } from '../../../test/support/tempProject.js';
import { demonstrationTurn } from '../src/index.js';

const demos = ['12+5=17.', '9-4=5.', '3*3=9.', '7+7=14.'].map((response, i) => ({ agent: 'solver', prompt: `Solve ${i}: `, response }));
const demonstrations = demos.map((demo) => JSON.stringify(demo)).join('\n');

const project = new TempProject('sft').write({
  'drmas.config.json': {
    plugins: ['algorithms', 'backend-tfjs', 'trainer'],
    models: { policy: { model: 'tiny', runtime: 'wasm', optimizer: { lr: 2e-3 } } },
    agents: { solver: { model: 'policy' } },
    trainer: { seed: 3, outputDir: 'runs' },
    report: undefined,
  },
  'demos.jsonl': `${demonstrations}\n`,
  'empty-prompt.jsonl': `${JSON.stringify({ agent: 'solver', prompt: '', response: '1.' })}\n`,
});
afterAll(() => project.dispose());

const sft = (...extra: string[]) =>
  runCli(['sft', '--config', 'drmas.config.json', '--data', 'demos.jsonl', '--batch-size', '1', ...extra], project.dir);

/** The learning rate of each progress line, in step order. */
function loggedRates(stderr: string): number[] {
  return [...stderr.matchAll(/step \d+\/\d+: nll [\d.]+, lr ([\d.e+-]+)/g)].map((m) => Number(m[1]));
}

/** The nll of the first progress line. */
function firstNll(stderr: string): number {
  const match = /step 1\/\d+: nll ([\d.]+)/.exec(stderr);
  if (!match) throw new Error(`no progress line in:\n${stderr}`);
  return Number(match[1]);
}

/** Each demonstration's log-probs from `drmas score` (a separate code path): prompt tokens after the first, then response tokens with the end token. */
async function scoredDemonstrations(seed: number): Promise<{ prompt: number[]; response: number[] }[]> {
  const codec = builtinTokenizer(512);
  const scored = [];
  for (const demo of demos) {
    const promptIds = codec.encode(demo.prompt, { addSpecialTokens: false });
    const ids = [...promptIds, ...codec.encode(demo.response, { addSpecialTokens: false }), codec.eosTokenId!];
    const result = await runCli(
      ['score', '--model', 'tiny', '--seed', String(seed), '--engine', 'tfjs', '--runtime', 'wasm', '--ids', ids.join(','), '--json'],
      project.dir,
    );
    const logprobs = (JSON.parse(result.stdout) as { logprobs: (number | null)[] }).logprobs as number[];
    scored.push({ prompt: logprobs.slice(1, promptIds.length), response: logprobs.slice(promptIds.length) });
  }
  return scored;
}

describe('drmas sft', () => {
  test('cosine schedule: lr = 2e-3 * (1 + cos(pi * k / 8)) / 2 over 8 steps without warm-up; the model is saved', async () => {
    const result = await sft('--epochs', '2', '--warmup-steps', '0', '--out', 'cosine');
    expect(result.code).toBe(0);
    // Hand-worked: cos(pi k / 8) for k = 0..7 is 1, .9239, .7071, .3827, 0, -.3827, -.7071, -.9239.
    const expected = [2e-3, 1.9239e-3, 1.7071e-3, 1.3827e-3, 1e-3, 0.6173e-3, 0.2929e-3, 0.0761e-3];
    const rates = loggedRates(result.stderr);
    expect(rates).toHaveLength(8);
    rates.forEach((rate, k) => expect(rate).toBeCloseTo(expected[k]!, 5));
    expect(existsSync(project.path('cosine', 'policy', 'model.safetensors'))).toBe(true);
  }, 120_000);

  test('constant schedule with a warm-up: linear from 0 over the warm-up steps, then the base rate', async () => {
    const result = await sft('--epochs', '1', '--schedule', 'constant', '--warmup-steps', '2', '--lr', '1e-3', '--out', 'constant');
    expect(result.code).toBe(0);
    expect(loggedRates(result.stderr)).toEqual([0, 0.5e-3, 1e-3, 1e-3]);
  }, 120_000);

  test("--prompt-loss-weight W: the first step's nll is the W-weighted mean over prompt and response tokens of the untrained model, as drmas score gives them", async () => {
    const scored = await scoredDemonstrations(5);
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    const expected = (w: number) =>
      -sum(scored.map((d) => w * sum(d.prompt) + sum(d.response))) / sum(scored.map((d) => w * d.prompt.length + d.response.length));
    // The prompt tokens of an untrained model are no likelier than its response tokens, so the three weights give apart values.
    expect(Math.abs(expected(1) - expected(0))).toBeGreaterThan(1e-3);
    for (const w of [0, 0.5, 1]) {
      const result = await sft(
        '--epochs',
        '1',
        '--batch-size',
        '4',
        '--prompt-loss-weight',
        String(w),
        '--set',
        'models.policy.seed=5',
        '--out',
        `prompt-${w}`,
      );
      expect(result.code).toBe(0);
      expect(firstNll(result.stderr)).toBeCloseTo(expected(w), 3);
    }
  }, 120_000);

  test('demonstrationTurn: a prompt weight moves the prompt after its first token into the trained tokens', () => {
    expect(demonstrationTurn([1, 2, 3], [7, 8], 0)).toEqual({ promptIds: [1, 2, 3], responseIds: [7, 8], weights: [1, 1] });
    expect(demonstrationTurn([1, 2, 3], [7, 8], 0.25)).toEqual({ promptIds: [1], responseIds: [2, 3, 7, 8], weights: [0.25, 0.25, 1, 1] });
    expect(demonstrationTurn([1], [7], 1)).toEqual({ promptIds: [1], responseIds: [7], weights: [1] });
  });

  test('a negative --prompt-loss-weight is an error naming the option, before any training', async () => {
    const result = await sft('--prompt-loss-weight=-1');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/error INVALID_ARGUMENT \(--prompt-loss-weight\): expects a number of 0 or more, got "-1"/);
    expect(result.stderr).not.toMatch(/step \d+/);
  });

  test('an empty prompt is an error naming the line, before any model loads (it crashed the scorer before)', async () => {
    const result = await runCli(['sft', '--config', 'drmas.config.json', '--data', 'empty-prompt.jsonl'], project.dir);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `error INVALID_ARGUMENT (${project.path('empty-prompt.jsonl')}: line 1.prompt): line 1 has an empty "prompt"`,
    );
    expect(result.stderr).not.toMatch(/model policy/);
  });

  test('an unknown schedule is an error naming --schedule, before any training', async () => {
    const result = await sft('--schedule', 'warmup_cosine');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/--schedule must be cosine, linear or constant, got "warmup_cosine"/);
    expect(result.stderr).not.toMatch(/step \d+/);
  });
});
