import { describe, expect, test } from '@jest/globals';
import { DrmasError } from '@drmas/core';

describe('DrmasError', () => {
  test('is() recognises a DrmasError of another copy of @drmas/core, subclasses included, where instanceof cannot', async () => {
    // The built copy is a second module instance beside the sources this test runs, as a plugin's own install would be.
    const other = await import('../dist/errors/DrmasError.js');
    class DatasetError extends other.DrmasError {}
    const error = new DatasetError('DATASET_INVALID', 'line 3: invalid JSON', { file: 'data.jsonl' });
    expect(error instanceof DrmasError).toBe(false);
    expect(DrmasError.is(error)).toBe(true);
    expect(error.name).toBe('DatasetError');
    expect(DrmasError.is(new Error('line 3: invalid JSON'))).toBe(false);
    expect(DrmasError.is(Object.assign(new Error('x'), { name: 'DrmasError', code: 'CONFIG_INVALID' }))).toBe(false);
  });

  test('at() locates an error at the config key its thrower could not know; the file moves into the message', () => {
    const low = new DrmasError('CHECKPOINT_INVALID', 'the file is truncated', { file: '/ckpt/model.safetensors', hint: 'save it again' });
    const located = low.at('models.policy.model', 'model policy failed to load');
    expect(located.format()).toBe(
      'error CHECKPOINT_INVALID (models.policy.model): model policy failed to load: /ckpt/model.safetensors: the file is truncated\n' +
        '  hint: save it again',
    );
    expect(located.cause).toBe(low);
  });
});
