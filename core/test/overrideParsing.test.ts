import { describe, expect, test } from '@jest/globals';
import { buildConfigSchema, coerceOverride, DrmasError, parseOverride, z } from '@drmas/core';

/** The kernel's sections plus a plugin section with one key of each kind `--set` parses. */
const schema = buildConfigSchema([
  {
    plugin: 'kinds',
    sections: {
      kinds: z.object({
        count: z.number().int().min(0),
        rate: z.number(),
        flag: z.boolean(),
        mode: z.enum(['fast', 'slow']),
        label: z.string(),
        levels: z.array(z.number().int()),
        options: z.record(z.string(), z.unknown()),
        segments: z.union([z.literal('auto'), z.number().int().min(1)]),
      }),
    },
  },
]);

function coerce(text: string): unknown {
  return coerceOverride(parseOverride(text), schema);
}

function refusal(text: string): DrmasError {
  try {
    coerce(text);
  } catch (error) {
    if (DrmasError.is(error)) return error;
    throw error;
  }
  throw new Error(`--set ${text} was accepted`);
}

describe('--set values parse strictly by the type at the key', () => {
  test.each([
    ['kinds.count=16', 16],
    ['kinds.count=-3', -3],
    ['kinds.count=007', 7],
    ['trainer.steps=0', 0],
    ['kinds.rate=0.5', 0.5],
    ['kinds.rate=1e-4', 0.0001],
    ['kinds.rate=-2.5E3', -2500],
    ['kinds.rate=.25', 0.25],
    ['kinds.flag=true', true],
    ['kinds.flag=false', false],
    ['kinds.mode=slow', 'slow'],
    ['kinds.label= spaced out ', ' spaced out '],
    ['kinds.label=', ''],
    ['kinds.levels=[1,2]', [1, 2]],
    ['kinds.levels=3,4', [3, 4]],
    ['kinds.levels=[5, 6]', [5, 6]],
    ['presets=[math, dapo]', ['math', 'dapo']],
    ['presets=math,dapo', ['math', 'dapo']],
    ['presets=[ ]', []],
    ['kinds.options={"a":1}', { a: 1 }],
    ['kinds.segments=auto', 'auto'],
    ['kinds.segments=4', 4],
    ['trainer.memoryBudget=8GiB', '8GiB'],
    ['trainer.memoryBudget=1000000', 1_000_000],
    ['agents.solver.model=policy', 'policy'],
    ['trainer.runName=a=b', 'a=b'],
  ])('%s gives %j', (text, value) => {
    expect(coerce(text)).toEqual(value);
  });

  test.each([
    ['kinds.count=0x10', 'a whole number written in decimal digits'],
    ['kinds.count=1e3', 'a whole number written in decimal digits'],
    ['kinds.count=', 'a whole number written in decimal digits'],
    ['kinds.count= 5', 'a whole number written in decimal digits'],
    ['kinds.count=5 ', 'a whole number written in decimal digits'],
    ['kinds.count=5abc', 'a whole number written in decimal digits'],
    ['kinds.count=1.0', 'a whole number written in decimal digits'],
    ['kinds.rate=NaN', 'a finite number'],
    ['kinds.rate=Infinity', 'a finite number'],
    ['kinds.rate=1e400', 'a finite number'],
    ['kinds.rate=0x1', 'a finite number'],
    ['kinds.flag=yes', 'true or false'],
    ['kinds.flag=1', 'true or false'],
    ['kinds.flag=TRUE', 'true or false'],
    ['kinds.mode=Fast', 'one of fast, slow'],
    ['kinds.levels=1,x', 'items separated by commas'],
    ['kinds.levels=[1, x]', 'items separated by commas'],
    ['kinds.options=a', 'a JSON object'],
    ['kinds.segments=some', 'expects auto, or a whole number written in decimal digits; got "some"'],
  ])('%s is refused: expected %s', (text, expected) => {
    const error = refusal(text);
    expect(error.code).toBe('CONFIG_OVERRIDE_INVALID');
    expect(error.file).toBe(`--set ${text}`);
    expect(error.key).toBe(text.slice(0, text.indexOf('=')));
    expect(error.message).toContain(expected);
  });

  test('an unknown key is refused at the part that leaves the schema, with a suggestion', () => {
    expect(refusal('nosuch.key=1')).toMatchObject({
      key: 'nosuch.key',
      message: expect.stringMatching(/^unknown key nosuch; the config has presets, /),
    });
    const typo = refusal('kinds.cuont=1');
    expect(typo.message).toBe(
      'unknown key kinds.cuont; kinds has count, rate, flag, mode, label, levels, options, segments. Did you mean "count"?',
    );
    expect(typo.hint).toBe('Did you mean "count"?');
    expect(refusal('agents.solver.modle=x').message).toContain('Did you mean "model"?');
    // An abbreviation: its letters in order within the key, from the same first letter.
    expect(refusal('trainer.outDir=/tmp/x').message).toContain('Did you mean "outputDir"?');
  });

  test("keys below a value of unknown shape are a plugin's to check", () => {
    expect(coerce('kinds.options.depth=3')).toBe(3);
  });

  test('a key must be dotted names followed by =', () => {
    for (const text of ['trainer.steps', ' trainer.steps=1', 'trainer..steps=1', '=3', 'trainer.st eps=1']) {
      expect(() => parseOverride(text)).toThrow('--set expects KEY=VALUE');
    }
    expect(parseOverride('a.b-c.d_e=x = y')).toEqual({ path: ['a', 'b-c', 'd_e'], raw: 'x = y', text: 'a.b-c.d_e=x = y' });
  });
});
