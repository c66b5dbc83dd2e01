import { describe, expect, test } from '@jest/globals';
import type { ZodObject } from 'zod';
import { buildConfigSchema, DrmasError, z } from '../src/index.js';

/** A plugin's form of `models.<id>.rollout`: a server of kind `alpha` or `beta`, with its own keys and defaults. */
const serverForm = {
  plugin: 'servers',
  sections: {
    models: z.strictObject({
      rollout: z.strictObject({
        kind: z.enum(['alpha', 'beta']),
        url: z.url({ protocol: /^https?$/ }),
        retries: z.number().int().min(0).default(3),
      }),
    }),
  },
};

function rolloutOf(schema: ZodObject, rollout: unknown) {
  return schema.safeParse({ models: { policy: { model: 'tiny', rollout } } });
}

describe('models.<id>.rollout: an engine name, or a server in the form its plugin declares', () => {
  test('without a plugin form: a name, or any object naming a kind, which the engine lookup then reports', () => {
    const schema = buildConfigSchema([]);
    expect(rolloutOf(schema, 'onnx').success).toBe(true);
    expect(rolloutOf(schema, { kind: 'alpha', url: 'http://gpu:8000', anything: 1 }).success).toBe(true);
    expect(rolloutOf(schema, 7).success).toBe(false);
    expect(rolloutOf(schema, { url: 'http://gpu:8000' }).success).toBe(false);
  });

  test("a plugin's form is the key's schema for its kinds: its defaults filled, each problem at its own key", () => {
    const schema = buildConfigSchema([serverForm]);
    const parsed = rolloutOf(schema, { kind: 'alpha', url: 'http://gpu:8000' });
    expect(parsed.data).toMatchObject({ models: { policy: { rollout: { kind: 'alpha', url: 'http://gpu:8000', retries: 3 } } } });
    const badUrl = rolloutOf(schema, { kind: 'beta', url: 'gpu:8000' });
    expect(badUrl.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['models.policy.rollout.url', 'Invalid URL']]);
    const unknownKey = rolloutOf(schema, { kind: 'beta', url: 'http://gpu:8000', retriez: 1 });
    expect(unknownKey.error?.issues.map((i) => [i.code, i.path.join('.')])).toEqual([['unrecognized_keys', 'models.policy.rollout']]);
    // A kind no plugin declares is left to the engine lookup, which names the plugin to add.
    expect(rolloutOf(schema, { kind: 'gamma', url: 'http://gpu:8000' }).success).toBe(true);
    expect(rolloutOf(schema, 'onnx').success).toBe(true);
  });

  test('two plugins may each declare a form; one without a kind of fixed names and a url is refused', () => {
    const other = {
      plugin: 'more-servers',
      sections: { models: z.strictObject({ rollout: z.strictObject({ kind: z.literal('gamma'), url: z.string() }) }) },
    };
    const schema = buildConfigSchema([serverForm, other]);
    expect(rolloutOf(schema, { kind: 'gamma', url: 7 }).success).toBe(false);
    expect(rolloutOf(schema, { kind: 'alpha', url: 'http://gpu:8000' }).success).toBe(true);
    const loose = {
      plugin: 'loose',
      sections: { models: z.strictObject({ rollout: z.strictObject({ kind: z.string(), url: z.string() }) }) },
    };
    let error: unknown;
    try {
      buildConfigSchema([loose]);
    } catch (caught) {
      error = caught;
    }
    expect(DrmasError.is(error) && [error.code, error.key, error.message]).toEqual([
      'PLUGIN_INVALID',
      'models.rollout',
      'plugin "loose" gives models.rollout a form without a kind of fixed names and a url',
    ]);
  });
});
