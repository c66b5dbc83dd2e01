import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { builtinTokenizer } from '@drmas/models';
import { runCli } from '../../../test/support/cliRunner.js';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { TempProject } from '../../../test/support/tempProject.js';

// The preference is a surface one a tiny random model can pick up in a few steps and carry to prompts it never saw:
// an answer over a refusal.
const pair = (a: number, b: number) => ({ prompt: `${a}+${b}=`, chosen: `${a + b}.`, rejected: 'no idea' });
const train = [
  [3, 4],
  [12, 5],
  [9, 9],
  [1, 17],
  [6, 2],
  [14, 3],
  [8, 11],
  [5, 5],
].map(([a, b]) => pair(a!, b!));
const heldOut = [
  [2, 7],
  [13, 6],
  [4, 4],
  [10, 1],
].map(([a, b]) => pair(a!, b!));
const jsonl = (rows: object[]) => `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`;

const project = new TempProject('dpo').write({
  'drmas.config.json': {
    plugins: ['algorithms', 'backend-tfjs', 'trainer'],
    models: { policy: { model: 'tiny', runtime: 'wasm', optimizer: { lr: 3e-3 } } },
    agents: { solver: { model: 'policy' } },
    trainer: { seed: 3, outputDir: 'runs' },
  },
  'pairs.jsonl': jsonl(train),
  'bad.jsonl': `${JSON.stringify(train[0])}\n\n{"prompt": "1+1=", "chosen": "2."}\n`,
  'empty-prompt.jsonl': `${JSON.stringify({ ...train[0], prompt: '' })}\n`,
});
afterAll(() => project.dispose());

const dpo = (...extra: string[]) => runCli(['dpo', '--config', 'drmas.config.json', '--data', 'pairs.jsonl', ...extra], project.dir);

/** Sequence log-prob of each response (its tokens and the end token) after its prompt, by `drmas score` (another code path). */
async function sequenceLogProbs(model: string[], texts: { prompt: string; response: string }[]): Promise<number[]> {
  const codec = builtinTokenizer(512);
  const sums: number[] = [];
  for (const { prompt, response } of texts) {
    const promptIds = codec.encode(prompt, { addSpecialTokens: false });
    const ids = [...promptIds, ...codec.encode(response, { addSpecialTokens: false }), codec.eosTokenId!];
    const args = [
      'score',
      ...model,
      '--engine',
      'tfjs',
      '--runtime',
      'wasm',
      '--ids',
      ids.join(','),
      '--prompt-length',
      String(promptIds.length),
    ];
    const result = await runCli([...args, '--json'], project.dir);
    if (result.code !== 0) throw new Error(result.stderr);
    const logprobs = (JSON.parse(result.stdout) as { logprobs: (number | null)[] }).logprobs;
    sums.push(logprobs.slice(promptIds.length).reduce<number>((a, b) => a + b!, 0));
  }
  return sums;
}

/** Each pair's log-prob margin, chosen minus rejected, under a model. */
async function margins(model: string[], pairs: typeof heldOut): Promise<number[]> {
  const chosen = await sequenceLogProbs(
    model,
    pairs.map((p) => ({ prompt: p.prompt, response: p.chosen })),
  );
  const rejected = await sequenceLogProbs(
    model,
    pairs.map((p) => ({ prompt: p.prompt, response: p.rejected })),
  );
  return chosen.map((c, i) => c - rejected[i]!);
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('drmas dpo', () => {
  test('one step against the initial weights: loss ln 2, TRL metrics in metrics.jsonl, the model saved', async () => {
    const result = await dpo('--batch-size', '8', '--out', 'one-step');
    expect(result.code).toBe(0);
    // Policy = reference at the first step: every h is 0, so the loss is -log sigmoid(0) = ln 2 and the margin 0.
    expect(result.stderr).toMatch(/dpo policy step 1\/1: loss 0\.6931, rewards\/accuracies 0\.0000, rewards\/margins 0\.0000/);
    const line = JSON.parse(readFileSync(project.path('one-step', 'metrics.jsonl'), 'utf8').trim()) as Record<string, number>;
    expect(line['dpo/policy/loss']).toBeCloseTo(Math.LN2, 5);
    expect(line['dpo/policy/pairs']).toBe(8);
    expect(Object.keys(line)).toEqual(
      expect.arrayContaining([
        'dpo/policy/rewards/chosen',
        'dpo/policy/rewards/accuracies',
        'dpo/policy/logps/chosen',
        'dpo/policy/logps/rejected',
      ]),
    );
    expect(existsSync(project.path('one-step', 'policy', 'model.safetensors'))).toBe(true);
  }, 60_000);

  test('a bad line is DATASET_INVALID naming the file, the line and the field, before any model loads', async () => {
    const result = await runCli(['dpo', '--config', 'drmas.config.json', '--data', 'bad.jsonl'], project.dir);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `error DATASET_INVALID (${project.path('bad.jsonl')}: line 3.rejected): line 3 has no string "rejected"`,
    );
    expect(result.stderr).not.toMatch(/model policy/);
    const empty = await runCli(['dpo', '--config', 'drmas.config.json', '--data', 'empty-prompt.jsonl'], project.dir);
    expect(empty.stderr).toContain(
      `error DATASET_INVALID (${project.path('empty-prompt.jsonl')}: line 1.prompt): line 1: "prompt" is empty`,
    );
  });

  test('a --ref without the model is an error naming --ref, before any model loads', async () => {
    const result = await dpo('--ref', '.');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`error INVALID_ARGUMENT (--ref): --ref ${project.dir} holds no model for worker group policy`);
    expect(result.stderr).not.toMatch(/model policy/);
  });

  test("a --ref for a LoRA agent is an error naming --ref and the agent's lora key: its reference is its base", async () => {
    project.write({
      'lora.config.json': {
        plugins: ['algorithms', 'backend-onnx', 'trainer'],
        models: { policy: { model: 'tiny' } },
        agents: { solver: { model: 'policy', lora: {} } },
      },
    });
    const result = await runCli(['dpo', '--config', 'lora.config.json', '--data', 'pairs.jsonl', '--ref', '.'], project.dir);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'error INVALID_ARGUMENT (--ref): --ref is given, but agent "solver" trains a LoRA adapter (agents.solver.lora)',
    );
    expect(result.stderr).toContain('hint: leave --ref out');
  });

  test('an unknown --loss names the option and the variants', async () => {
    const result = await dpo('--loss', 'sigmod');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/error INVALID_ARGUMENT \(--loss\): --loss must be one of sigmoid, robust, hinge, ipo, got "sigmod"/);
    expect(result.stderr).toMatch(/Did you mean "sigmoid"/);
  });
});

describeSlow('drmas dpo trains (tiny model, a few steps)', () => {
  test('widens the chosen-over-rejected margin on held-out pairs (drmas score before and after); --ref gives the loss drmas score predicts', async () => {
    const result = await dpo('--epochs', '2', '--batch-size', '4', '--beta', '0.5', '--warmup-steps', '0', '--out', 'trained');
    expect(result.code).toBe(0);
    const initial = ['--model', 'tiny', '--seed', '3'];
    const trained = ['--model', project.path('trained', 'policy')];
    const before = await margins(initial, heldOut);
    const after = await margins(trained, heldOut);
    expect(mean(after)).toBeGreaterThan(mean(before) + 1);
    after.forEach((m, i) => expect(m).toBeGreaterThan(before[i]!));

    // Against the trained model as reference, the initial policy's first step (all 8 pairs) has loss
    // mean softplus(-beta h), h = margin(initial) - margin(trained) per pair.
    const policy = await margins(initial, train);
    const ref = await margins(trained, train);
    const expected = mean(policy.map((m, i) => Math.log1p(Math.exp(-0.5 * (m - ref[i]!)))));
    const withRef = await dpo('--batch-size', '8', '--beta', '0.5', '--ref', 'trained', '--out', 'against-trained');
    expect(withRef.code).toBe(0);
    const loss = Number(/dpo policy step 1\/1: loss ([\d.]+)/.exec(withRef.stderr)![1]);
    expect(loss).toBeGreaterThan(1);
    expect(loss).toBeCloseTo(expected, 3);
  }, 300_000);
});
