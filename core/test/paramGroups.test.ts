import { describe, expect, test } from '@jest/globals';
import { assignParamGroups, DrmasError, ParamGroupError } from '@drmas/core';

const NAMES = ['lm_head.weight', 'model.norm.weight', 'model.layers.0.input_layernorm.weight', 'model.layers.0.mlp.up_proj.weight'];

describe('param groups', () => {
  test('assign each parameter to the first group whose pattern matches it; * is a wildcard', () => {
    const groups = assignParamGroups(NAMES, [{ params: ['model.norm.weight'] }, { params: ['*norm*'] }]);
    expect([...groups]).toEqual([
      ['lm_head.weight', -1],
      ['model.norm.weight', 0],
      ['model.layers.0.input_layernorm.weight', 1],
      ['model.layers.0.mlp.up_proj.weight', -1],
    ]);
    expect([...assignParamGroups(NAMES)].every(([, g]) => g === -1)).toBe(true);
  });

  test('a pattern that matches nothing is an error naming the group and the nearest names', () => {
    let error: unknown;
    try {
      assignParamGroups(NAMES, [{ params: ['*norm*'] }, { params: ['model.nrm.weight'] }]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ParamGroupError);
    expect((error as ParamGroupError).group).toBe(1);
    expect((error as Error).message).toMatch(/"model\.nrm\.weight" matches no parameter.*did you mean "model\.norm\.weight"/);
    // Dots are literal, not regular-expression wildcards.
    expect(() => assignParamGroups(['model.norm.weight'], [{ params: ['model.norm.weigh.'] }])).toThrow(ParamGroupError);
  });

  test('the error is a user error (a DrmasError) with a hint on how parameters are named', () => {
    const error = (() => {
      try {
        assignParamGroups(NAMES, [{ params: ['x'] }]);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(DrmasError.is(error)).toBe(true);
    expect((error as DrmasError).hint).toMatch(/model\.norm\.weight/);
  });
});
