import { mathAnswersEqual, normalizeMathAnswer, parseExactNumber } from '../src/index.js';

describe('normalizeMathAnswer', () => {
  test.each([
    ['\\left( 1, 2 \\right)', '(1,2)'],
    ['\\dfrac{1}{2}', '\\frac{1}{2}'],
    ['\\tfrac12', '\\frac{1}{2}'],
    ['\\frac1{3}', '\\frac{1}{3}'],
    ['$5$', '5'],
    ['10\\text{ cm}', '10'],
    ['10\\text{ cm}^2', '10'],
    ['4 \\mbox{ inches}^{3}', '4'],
    ['\\text{(B)}', '(B)'],
    ['90^\\circ', '90'],
    ['50\\%', '50'],
    ['7.', '7'],
    ['.5', '\\frac{1}{2}'],
    ['3/4', '\\frac{3}{4}'],
    ['x = 3', '3'],
    ['y=2x+3', '2x+3'],
    ['\\sqrt3', '\\sqrt{3}'],
    ['\\boxed{4}', '4'],
    ['1\\!000', '1000'],
  ])('%s -> %s', (input, expected) => {
    expect(normalizeMathAnswer(input)).toBe(expected);
  });
});

describe('parseExactNumber', () => {
  test('reads integers, decimals, separators and fractions exactly', () => {
    expect(parseExactNumber('1,000')).toEqual({ num: 1000n, den: 1n });
    expect(parseExactNumber('-0.25')).toEqual({ num: -1n, den: 4n });
    expect(parseExactNumber('\\frac{-6}{8}')).toEqual({ num: -3n, den: 4n });
    expect(parseExactNumber('-\\frac{1}{2}')).toEqual({ num: -1n, den: 2n });
    expect(parseExactNumber('1/0')).toBeUndefined();
    expect(parseExactNumber('x')).toBeUndefined();
  });
});

describe('mathAnswersEqual', () => {
  test.each([
    ['\\frac{1}{2}', '0.5'],
    ['0.5', '1/2'],
    ['\\frac12', '1/2'],
    ['\\dfrac{1}{2}', '\\frac{1}{2}'],
    ['.5', '\\frac{1}{2}'],
    ['10', '10.0'],
    ['10.00', '10'],
    ['1,000', '1000'],
    ['1{,}000', '1000'],
    ['x=3', '3'],
    ['3', 'x = 3'],
    ['-\\frac{1}{2}', '\\frac{-1}{2}'],
    ['-1/2', '-0.5'],
    ['+7', '7'],
    ['2\\sqrt{2}', '\\sqrt{8}'],
    ['\\sqrt{2}/2', '\\frac{\\sqrt{2}}{2}'],
    ['\\frac{\\sqrt{3}}{2}', '\\frac{1}{2}\\sqrt{3}'],
    ['(x+1)^2', 'x^2+2x+1'],
    ['x^{2}-1', '(x-1)(x+1)'],
    ['2x \\cdot 3', '6x'],
    ['\\pi/2', '\\frac{\\pi}{2}'],
    ['\\sqrt[3]{8}', '2'],
    ['50\\%', '50'],
    ['90^\\circ', '90'],
    ['5\\text{ cm}', '5'],
    ['(1, \\frac{1}{2})', '(1,0.5)'],
    ['[0, 2)', '\\left[0,2\\right)'],
    ['$\\$12$', '12'],
  ])('%s equals %s', (a, b) => {
    expect(mathAnswersEqual(a, b)).toBe(true);
    expect(mathAnswersEqual(b, a)).toBe(true);
  });

  test.each([
    ['3', '-3'],
    ['\\frac{1}{3}', '0.33'],
    ['0.333', '1/3'],
    ['50\\%', '0.5'],
    ['2', '3'],
    ['x+1', 'y+1'],
    ['x^2', 'x^3'],
    ['\\sqrt{2}', '1.414'],
    ['(1,2)', '(2,1)'],
    ['(1,2)', '[1,2]'],
    ['(1,2)', '(1,2,3)'],
    ['1,000', '1'],
    ['', '0'],
    ['0', ''],
    ['2\\sqrt{2}', '\\sqrt{2}'],
  ])('%s differs from %s', (a, b) => {
    expect(mathAnswersEqual(a, b)).toBe(false);
    expect(mathAnswersEqual(b, a)).toBe(false);
  });

  test('garbage never throws and is not equal', () => {
    const garbage = [
      '\\frac{',
      '}{',
      '((((',
      '\\sqrt',
      'x^^2',
      '1/0',
      'NaN',
      '\\unknown{3}',
      'zeros(10000, 10000)',
      'import("fs")',
      '\\frac{1}{0}',
      'a'.repeat(10_000),
      '\u0000\u0001',
      '2^^^',
      '[1,2',
    ];
    for (const g of garbage) {
      expect(() => mathAnswersEqual(g, '3')).not.toThrow();
      expect(mathAnswersEqual(g, '3')).toBe(false);
      expect(mathAnswersEqual('3', g)).toBe(false);
    }
    expect(mathAnswersEqual(undefined as unknown as string, '3')).toBe(false);
    expect(mathAnswersEqual(3 as unknown as string, '3')).toBe(true);
  });
});
