import { afterAll, describe, expect, test } from '@jest/globals';
import { testSlow } from '../../../test/support/describeSlow.js';
import { mkdirSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtinConfigJson, builtinModel, openPolicyBackend, saveCheckpoint } from '@drmas/models';
import { runBin, runNode } from '../../../test/support/cliRunner.js';
import { REPO_ROOT, TempProject } from '../../../test/support/tempProject.js';
import { qwen25ConfigJson } from '../../../models/test/modelFixtures.js';

/** `node --import` it: onnxruntime-node then does not resolve, as where it is not installed. */
const WITHOUT_ONNXRUNTIME = fileURLToPath(new URL('./fixtures/withoutOnnxRuntime.mjs', import.meta.url));

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

  test('an engine none of the installed packages registers is named with the ones that are, and the closest', () => {
    const result = runBin(['score', '--model', 'tiny', '--ids', '1,2', '--engine', 'onxx']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'error UNKNOWN_NAME (--engine): no engine named "onxx" is registered (registered: onnx, tfjs)\n  hint: Did you mean "onnx"?\n',
    );
  });
});

describe('the engine drmas score and generate choose without --engine', () => {
  test('is onnx where onnxruntime-node loads, as for training', async () => {
    const backend = await openPolicyBackend(undefined, { model: 'tiny', seed: 5 }, ['score']);
    try {
      expect(backend.name).toBe('onnx:cli');
    } finally {
      backend.dispose();
    }
    const args = ['score', '--model', 'tiny', '--seed', '5', '--ids', '7,42,300,12', '--prompt-length', '2', '--json'];
    const chosen = runBin(args);
    expect([chosen.code, chosen.stderr]).toEqual([0, '']);
    expect(chosen.stdout).toBe(runBin([...args, '--engine', 'onnx']).stdout);
  });

  test('without onnxruntime-node, for a model too big for tfjs on wasm: one message naming each engine and why it was skipped', () => {
    // Qwen2.5-1.5B's published configuration, without weights: the engines decide from config.json.
    const model = project.path('qwen2.5-1.5b');
    mkdirSync(model, { recursive: true });
    writeFileSync(path.join(model, 'config.json'), JSON.stringify(qwen25ConfigJson('1.5B')));
    const bin = path.join(REPO_ROOT, 'core', 'bin', 'drmas.js');
    const result = runNode(
      ['--import', WITHOUT_ONNXRUNTIME, bin, 'score', '--model', model, '--ids', '1,2', '--runtime', 'wasm'],
      REPO_ROOT,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'error INVALID_ARGUMENT (--engine): no engine here can score token log-probs for this model:\n' +
        '  - onnx: onnxruntime-node is not installed (ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node@1.30.0)\n' +
        "  - tfjs: refuses this model: its float32 weights alone take 5.75 GiB, beyond the wasm runtime's 4 GiB heap\n" +
        '  hint: install what a skipped engine is missing, or a plugin whose engine can score token log-probs\n',
    );
  });
});
