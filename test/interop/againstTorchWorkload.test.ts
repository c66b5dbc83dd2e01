import { expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BASE_CHECKPOINT } from '@drmas/preset-math';
import { describeInterop } from '../support/interopSuite.js';
import { REPO_ROOT } from '../support/tempProject.js';

// `npm run bench:sizes-torch` compares drmas's onnx engine with transformers on PyTorch (bench/sizes/againstTorch.mjs):
// its two sides must train the same workload. Both sides' first update here, on the math preset's base checkpoint
// (a Qwen2 folder as transformers saves it), from the same weights, tokens and advantages in micro-batches of two
// rows: the loss and the gradient norm before clipping agree, so neither side measures less (or other) work.

const built = existsSync(join(REPO_ROOT, 'plugins', 'backend-onnx', 'dist', 'index.js'));

function lastJson(command: string, args: string[]): Record<string, number | string> {
  const run = spawnSync(command, args, { cwd: REPO_ROOT, encoding: 'utf8', timeout: 300_000 });
  const line = run.stdout
    .trim()
    .split('\n')
    .findLast((l) => l.startsWith('{'));
  if (run.status !== 0 || !line) throw new Error(`${command} ${args.join(' ')} failed (${run.status}): ${run.stderr.slice(-2000)}`);
  return JSON.parse(line) as Record<string, number | string>;
}

describeInterop('transformers on PyTorch: the tokens-per-second benchmark trains one workload on both sides', 'trl', (python) => {
  (built ? test : test.skip)(
    'the first update: the same loss and gradient norm (4 rows of 12 + 20 tokens)',
    () => {
      const drmas = lastJson(process.execPath, ['bench/sizes/tokensPerSecond.mjs', 'train', BASE_CHECKPOINT, '4', '12', '20']);
      const torch = lastJson(python, [
        'bench/sizes/torch_tokens.py',
        'train',
        BASE_CHECKPOINT,
        ...['--rows', '4', '--prompt', '12', '--response', '20', '--micro-batch', '2', '--threads', '2'],
      ]);
      expect(drmas.tokens).toBe(4 * 32);
      expect(torch.tokens).toBe(4 * 32);
      const loss = Number(torch.firstLoss);
      const norm = Number(torch.firstGradNorm);
      expect(norm).toBeGreaterThan(0.01);
      expect(Math.abs(Number(drmas.firstLoss) - loss)).toBeLessThan(1e-5 * Math.max(1, Math.abs(loss)));
      expect(Math.abs(Number(drmas.firstGradNorm) - norm)).toBeLessThan(1e-4 * norm);
    },
    600_000,
  );
});
