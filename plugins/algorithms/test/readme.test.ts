import { describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { computeAdvantage } from '../src/index.js';

/** The README's `computeAdvantage` example: the first js block of its "Advantage estimators" section. */
function readmeExample(): string {
  const readme = readFileSync('plugins/algorithms/README.md', 'utf8');
  const section = readme.slice(readme.indexOf('## Advantage estimators: `computeAdvantage(name, input, options)`'));
  const block = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('the README has no js example under "Advantage estimators"');
  return block;
}

describe("the README's computeAdvantage example", () => {
  test('runs as written (node, the built package) and prints the hand-worked advantages', () => {
    const stdout = execFileSync(process.execPath, ['--input-type=module', '--eval', readmeExample()], { encoding: 'utf8' });
    const { advantages, returns } = JSON.parse(stdout) as { advantages: number[][]; returns: number[][] };
    // q1: scores 1 and 0; mean 0.5; unbiased std sqrt(0.5) = 0.70710678; a = +-0.5 / (0.70710678 + 1e-6).
    const a = 0.5 / (Math.SQRT1_2 + 1e-6);
    expect(a).toBeCloseTo(0.7071058, 7);
    const expected = [
      [a, a],
      [-a, 0],
      [0, 0],
      [0, 0],
    ];
    advantages.forEach((row, r) => row.forEach((v, t) => expect(v).toBeCloseTo(expected[r]![t]!, 12)));
    expect(returns).toEqual(advantages);
  });

  test('a misspelt name lists the estimators and suggests the closest; a definition without compute is refused', () => {
    const input = { tokenRewards: [[1]], responseMask: [[1]], groupIds: ['q'] };
    expect(() => computeAdvantage('grop', input)).toThrow(/Did you mean "grpo"/);
    expect(() => computeAdvantage({ name: 'x' } as never, input)).toThrow(/estimator: expected an estimator name/);
  });
});
