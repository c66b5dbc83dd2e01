import { describe, expect, test } from '@jest/globals';
import { runBin } from '../../../test/support/cliRunner.js';

describe('drmas score / generate --engine', () => {
  test('the same checkpoint scores the same on onnx and tfjs (1e-4), and greedy generation agrees', () => {
    const args = ['score', '--model', 'tiny', '--seed', '5', '--ids', '7,42,300,12,99,5', '--prompt-length', '2', '--json'];
    const onnx = runBin([...args, '--engine', 'onnx']);
    const tfjs = runBin([...args, '--engine', 'tfjs', '--runtime', 'wasm']);
    expect(onnx.code).toBe(0);
    expect(tfjs.code).toBe(0);
    const a = JSON.parse(onnx.stdout).logprobs as Array<number | null>;
    const b = JSON.parse(tfjs.stdout).logprobs as Array<number | null>;
    expect(a.slice(0, 2)).toEqual([null, null]);
    a.slice(2).forEach((lp, i) => expect(Math.abs((lp as number) - (b[i + 2] as number))).toBeLessThan(1e-4));
    const generate = (engine: string) => runBin(['generate', '--model', 'tiny', '--seed', '5', '--prompt-ids', '7,42,300', '--temperature', '0', '--max-new-tokens', '6', '--engine', engine]);
    expect(generate('onnx').stdout).toBe(generate('tfjs').stdout);
  });

  test('an engine that is not installed is a clear error', () => {
    const result = runBin(['score', '--model', 'tiny', '--ids', '1,2', '--engine', 'vllm']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('engine "vllm" needs the package @drmas/plugin-backend-vllm');
  });
});
