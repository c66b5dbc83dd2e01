/**
 * A large model's micro-batch bound, from the run's memory budget to its trainer: `examples/real-models/
 * qwen2.5-0.5b-instruct.yaml` on a random checkpoint of Qwen2.5-0.5B's published config cut to three layers (its
 * vocabulary of 151,936 x 896 alone makes it a large model: one copy of its weights, micro-batches by tokens), with
 * `trainer.memoryBudget` set. `drmas validate` prints the bound the budget gives; the step's `actor/policy/micro_batches`
 * must be the runs its rows take packed to that bound, counted here from the run's rollouts (prompts tokenized by the
 * checkpoint's tokenizer) by a plain greedy packing written for the test: widest first within each agent's rows, a run
 * taking rows while their count times the widest stays within the bound (or the step's widest row, where that is more).
 */
import { afterAll, expect, test } from '@jest/globals';
import { copyFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseModelConfig, randomInitWeights, saveCheckpoint, Tokenizer } from '@drmas/models';
import { runBin, runCli } from './support/cliRunner.js';
import { describeSlow } from './support/describeSlow.js';
import { cutDown, PUBLISHED_MODELS } from './support/publishedConfigs.js';
import { ONE_QUIET_STEP, setFlags } from './support/runSettings.js';
import { REPO_ROOT, TempProject } from './support/tempProject.js';

const scratch = new TempProject('budget-micro-batches');
afterAll(() => scratch.dispose());

const CONFIG = 'qwen2.5-0.5b-instruct.yaml';

interface RowWidth {
  prompt: number;
  response: number;
}

/**
 * The runs `parts`' rows take under `bound` padded tokens each (a run's rows x its longest prompt plus its longest
 * response): each part on its own, rows widest first, a run taking the next row while it fits, its first whatever its
 * width.
 */
function referenceRuns(parts: RowWidth[][], bound: number): number {
  let runs = 0;
  for (const part of parts) {
    const rows = [...part].sort((a, b) => b.prompt + b.response - (a.prompt + a.response));
    let [count, prompt, response] = [0, 0, 0];
    for (const row of rows) {
      const [p, r] = [Math.max(prompt, row.prompt), Math.max(response, row.response)];
      if (count === 0 || (count + 1) * (p + r) <= bound) [count, prompt, response] = [count + 1, p, r];
      else [runs, count, prompt, response] = [runs + 1, 1, row.prompt, row.response];
    }
    if (count > 0) runs++;
  }
  return runs;
}

describeSlow('a large model trains in micro-batches of the bound its memory budget gives', () => {
  test('`actor/policy/micro_batches` is what the bound drmas validate prints makes of the step rows', async () => {
    const model = PUBLISHED_MODELS['Qwen2.5-0.5B']!;
    const dir = scratch.dir;
    const config = cutDown(model.config, 3);
    await saveCheckpoint(path.join(dir, model.folder), {
      config,
      tensors: randomInitWeights(parseModelConfig(config), 0),
      generationConfig: model.generationConfig,
      tokenizerDir: model.tokenizerDir,
      dtype: 'BF16',
    });
    copyFileSync(path.join(REPO_ROOT, 'examples', 'real-models', CONFIG), path.join(dir, CONFIG));
    const settings = setFlags([
      'trainer.memoryBudget=12GiB',
      'rollout.promptsPerStep=4',
      'rollout.samplesPerPrompt=4',
      'agents.solver.sampling.maxNewTokens=48',
      'agents.verifier.sampling.maxNewTokens=48',
      // Runs of up to 64 rows (the default is 8), so that tokens alone bound them.
      'agents.solver.train.microBatchSize=64',
      'agents.verifier.train.microBatchSize=64',
      'algorithm.loss.entropyCoef=0.001',
      ...ONE_QUIET_STEP,
    ]);

    const validate = await runCli(['validate', '--config', path.join(dir, CONFIG), '--json', ...settings], REPO_ROOT);
    expect(validate.stderr).toBe('');
    const memory = (JSON.parse(validate.stdout) as { memory: Array<{ what: string; arithmetic: string }> }).memory;
    const step = memory.find((m) => m.what === 'a training step')!.arithmetic;
    // 12 GiB / 14 = 878 MiB of activations, over the least micro-batch's 512 MiB: the budget's share, not the floor.
    const printed =
      /one micro-batch of ([\d,]+) tokens \(model policy's engine's bound: activations of 1\/14 of the memory budget, 878 MiB\) x ([\d,]+) bytes of 2 x the activations/.exec(
        step,
      );
    expect(printed).not.toBeNull();
    const [bound, twice] = [printed![1]!, printed![2]!].map((n) => Number(n.replace(/,/g, '')));
    const perToken = twice! / 2;
    expect(bound).toBe(Math.floor((12 * 2 ** 30) / 14 / perToken));
    const floor = Math.floor(2 ** 29 / perToken);

    const result = runBin(['train', '--config', CONFIG, '--run-dir', 'run', ...settings], dir, 900_000);
    expect(result.stderr).not.toContain('error');
    expect(result.code).toBe(0);
    const metrics = readFileSync(path.join(dir, 'run', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n');
    const last = JSON.parse(metrics.at(-1)!) as Record<string, number>;

    const tokenizer = (await Tokenizer.fromDirectory(path.join(dir, model.folder)))!;
    const rows = readFileSync(path.join(dir, 'run', 'rollouts.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { trajectoryId: string; agent: string; prompt: string; responseTokens: number });
    // Every episode's rows are there (4 prompts x 4 samples).
    expect(new Set(rows.map((row) => row.trajectoryId)).size).toBe(16);
    const byAgent = new Map<string, RowWidth[]>();
    for (const row of rows) {
      const widths = { prompt: tokenizer.encode(row.prompt, { addSpecialTokens: false }).length, response: row.responseTokens };
      byAgent.set(row.agent, [...(byAgent.get(row.agent) ?? []), widths]);
    }
    const all = [...byAgent.values()].flat();
    const widestRow = Math.max(...all.map((r) => r.prompt + r.response));
    const expected = referenceRuns([...byAgent.values()], Math.max(bound!, widestRow));
    // The bound bites (the step's rows are more than one run an agent holds), and the floor's would take more runs: the
    // count tells the budget's bound from a trainer that never got the budget.
    expect(expected).toBeGreaterThan(byAgent.size);
    expect(referenceRuns([...byAgent.values()], Math.max(floor, widestRow))).toBeGreaterThan(expected);
    expect(last['actor/policy/micro_batches']).toBe(expected);
  }, 1_200_000);
});
