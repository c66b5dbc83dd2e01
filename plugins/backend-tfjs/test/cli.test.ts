import { afterAll, describe, expect, test } from '@jest/globals';
import { rmSync, statSync, truncateSync } from 'node:fs';
import path from 'node:path';
import { createTfjsPolicyBackend } from '../src/index.js';
import { scoreSequences } from '@drmas/core';
import { runBin } from '../../../test/support/cliRunner.js';
import { TempProject } from '../../../test/support/tempProject.js';

const project = new TempProject('tfjs-cli');
afterAll(() => project.dispose());

describe('drmas generate / score through the drmas bin', () => {
  test('score --json on a folder holding only config.json and model.safetensors', async () => {
    const backend = await createTfjsPolicyBackend({ model: 'tiny', seed: 3, runtime: 'wasm' });
    const dir = project.path('bare');
    await backend.save(dir, { optimizer: false });
    for (const extra of ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json'])
      rmSync(path.join(dir, extra), { force: true });
    const ids = [5, 17, 300, 42, 7];
    const direct = (await scoreSequences(backend, [ids.slice(0, 2)], [ids.slice(2)])).logProbs[0]!;
    backend.dispose();
    const result = runBin([
      'score',
      '--model',
      dir,
      '--ids',
      ids.join(','),
      '--prompt-length',
      '2',
      '--json',
      '--runtime',
      'wasm',
      '--engine',
      'tfjs',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const { logprobs } = JSON.parse(result.stdout) as { logprobs: Array<number | null> };
    expect(logprobs.slice(0, 2)).toEqual([null, null]);
    logprobs.slice(2).forEach((lp, i) => expect(lp).toBeCloseTo(direct[i]!, 4));
  });

  test('generate streams text from a built-in model and prompt ids from a bare checkpoint', () => {
    const text = runBin([
      'generate',
      '--model',
      'tiny',
      '--prompt',
      'hello',
      '--max-new-tokens',
      '8',
      '--seed',
      '1',
      '--runtime',
      'wasm',
      '--engine',
      'tfjs',
    ]);
    expect(text.code).toBe(0);
    expect(text.stdout.length).toBeGreaterThan(0);
    const bare = runBin([
      'generate',
      '--model',
      project.path('bare'),
      '--prompt-ids',
      '1,2,3',
      '--max-new-tokens',
      '4',
      '--temperature',
      '0',
      '--runtime',
      'wasm',
      '--engine',
      'tfjs',
    ]);
    expect(bare.code).toBe(0);
    expect(
      bare.stdout
        .trim()
        .split(/\s+/)
        .every((id) => /^\d+$/.test(id)),
    ).toBe(true);
  });

  test('bad input is a user error naming the flag', () => {
    const result = runBin(['score', '--model', 'tiny', '--ids', '1,,x']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error INVALID_ARGUMENT (--ids)');
    const missing = runBin(['generate', '--model', project.path('nope'), '--prompt', 'x']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('(--model)');
  });

  test.each([
    [['--max-new-tokens', '0x10'], '(--max-new-tokens): expects a whole number from 1 to 1000000, got "0x10"'],
    [['--top-p', '0'], '(--top-p): expects a number above 0 and at most 1, got "0"'],
    [['--seed', '1.5'], '(--seed): expects a whole number from 0 to 4294967295, got "1.5"'],
  ])('generate %j: refused before the model loads', (flags, message) => {
    const result = runBin(['generate', '--model', 'tiny', '--prompt-ids', '1,2', ...flags]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`error INVALID_ARGUMENT ${message}`);
  });

  test('a truncated checkpoint, an unknown runtime and a text prompt without a tokenizer: exit 1 naming the flag, a hint, no stack', async () => {
    const backend = await createTfjsPolicyBackend({ model: 'tiny', seed: 3, runtime: 'wasm' });
    const dir = project.path('truncated');
    await backend.save(dir, { optimizer: false });
    backend.dispose();
    const weights = path.join(dir, 'model.safetensors');
    truncateSync(weights, statSync(weights).size - 100);
    const truncated = runBin(['generate', '--model', dir, '--prompt', 'hi', '--runtime', 'wasm', '--engine', 'tfjs']);
    expect(truncated.code).toBe(1);
    expect(truncated.stderr).toContain(`error CHECKPOINT_INVALID (--model): ${weights}: tensor "`);
    expect(truncated.stderr).toMatch(/the file is truncated[^\n]*\n {2}hint: .*save the checkpoint again\n$/);

    const runtime = runBin(['generate', '--model', 'tiny', '--prompt', 'hi', '--runtime', 'wsam', '--engine', 'tfjs']);
    expect(runtime.code).toBe(1);
    expect(runtime.stderr).toMatch(
      /^error RUNTIME_UNAVAILABLE \(--runtime\): no tfjs runtime available for 'wsam':\n {2}- wsam: unknown runtime/,
    );
    expect(runtime.stderr).toContain('hint: pick a known runtime, or auto. Did you mean "wasm"?');

    const text = runBin(['generate', '--model', project.path('bare'), '--prompt', 'hi', '--runtime', 'wasm', '--engine', 'tfjs']);
    expect(text.code).toBe(1);
    expect(text.stderr).toBe(
      `error INVALID_ARGUMENT (--prompt): ${project.path('bare')} has no tokenizer.json to encode a text prompt\n` +
        '  hint: give the prompt as token ids: --prompt-ids 1,2,3\n',
    );
    for (const { stderr } of [truncated, runtime, text]) expect(stderr).not.toMatch(/\n\s+at /);
  });
});
