import { afterAll, describe, expect, test } from '@jest/globals';
import { testSlow } from '../../../test/support/describeSlow.js';
import { statSync, truncateSync } from 'node:fs';
import path from 'node:path';
import { builtinConfigJson, builtinModel, saveCheckpoint } from '@drmas/models';
import { runBin } from '../../../test/support/cliRunner.js';
import { TempProject } from '../../../test/support/tempProject.js';

/** What `drmas score --json` prints: the log-prob of each id after its prefix, null for the prompt's ids. */
interface ScoreJson {
  logprobs: Array<number | null>;
}

const project = new TempProject('onnx-cli');
afterAll(() => project.dispose());

describe('drmas score / generate --engine', () => {
  testSlow('the same checkpoint scores the same on onnx and tfjs (1e-4), and greedy generation agrees (slow)', () => {
    const args = ['score', '--model', 'tiny', '--seed', '5', '--ids', '7,42,300,12,99,5', '--prompt-length', '2', '--json'];
    const onnx = runBin([...args, '--engine', 'onnx']);
    const tfjs = runBin([...args, '--engine', 'tfjs', '--runtime', 'wasm']);
    expect(onnx.code).toBe(0);
    expect(tfjs.code).toBe(0);
    const a = (JSON.parse(onnx.stdout) as ScoreJson).logprobs;
    const b = (JSON.parse(tfjs.stdout) as ScoreJson).logprobs;
    expect(a.slice(0, 2)).toEqual([null, null]);
    a.slice(2).forEach((lp, i) => expect(Math.abs((lp as number) - (b[i + 2] as number))).toBeLessThan(1e-4));
    const generate = (engine: string) =>
      runBin([
        'generate',
        '--model',
        'tiny',
        '--seed',
        '5',
        '--prompt-ids',
        '7,42,300',
        '--temperature',
        '0',
        '--max-new-tokens',
        '6',
        '--engine',
        engine,
      ]);
    expect(generate('onnx').stdout).toBe(generate('tfjs').stdout);
  });

  test('a truncated checkpoint on onnx: exit 1, CHECKPOINT_INVALID at --model naming the file, a hint, no stack', async () => {
    const dir = project.path('truncated');
    const { weights, tokenizer } = builtinModel('tiny');
    await saveCheckpoint(dir, { config: builtinConfigJson('tiny', undefined, tokenizer), tensors: weights, tokenizer });
    const file = path.join(dir, 'model.safetensors');
    truncateSync(file, statSync(file).size - 100);
    const result = runBin(['score', '--model', dir, '--ids', '1,2', '--engine', 'onnx']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`error CHECKPOINT_INVALID (--model): ${file}: tensor "`);
    expect(result.stderr).toMatch(/the file is truncated[^\n]*\n {2}hint: .+\n$/);
  });

  test('an engine that is not installed is a clear error', () => {
    const result = runBin(['score', '--model', 'tiny', '--ids', '1,2', '--engine', 'vllm']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('engine "vllm" needs the package @drmas/plugin-backend-vllm');
  });
});
