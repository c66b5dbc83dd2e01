import { describe, expect, test } from '@jest/globals';
import { calculatorTool, evaluateExactly, MAX_EXPONENT, ToolRegistry, ToolSession } from '../src/index.js';

describe('calculator: exact arithmetic', () => {
  test('decimals are exact: 0.1 + 0.2 is 0.3, 1.1 * 1.1 is 1.21, 0.3 - 0.1 is 0.2', () => {
    expect(evaluateExactly('0.1 + 0.2')).toBe('0.3');
    expect(evaluateExactly('1.1 * 1.1')).toBe('1.21');
    expect(evaluateExactly('0.3 - 0.1')).toBe('0.2');
  });

  test('big integers have every digit (checked against BigInt)', () => {
    const a = 123456789012345678901234567890n;
    const b = 987654321987654321n;
    expect(evaluateExactly(`${a} * ${b}`)).toBe((a * b).toString());
    expect(evaluateExactly('2^100')).toBe('1267650600228229401496703205376');
    expect(evaluateExactly('99999999999999999999 + 1')).toBe('100000000000000000000');
  });

  test('fractions stay exact: 1/3 + 1/6 is 0.5; 1/3 is 1/3 with its approximation; 22/7 - 3 is 1/7', () => {
    expect(evaluateExactly('1/3 + 1/6')).toBe('0.5');
    expect(evaluateExactly('1/3')).toBe('1/3 (about 0.333333333333)');
    expect(evaluateExactly('22/7 - 3')).toBe('1/7 (about 0.142857142857)');
    expect(evaluateExactly('-7/2')).toBe('-3.5');
    expect(evaluateExactly('(3 - 1)^-2')).toBe('0.25');
    expect(evaluateExactly('17 mod 5 + abs(-4) * gcd(12, 18)')).toBe('26');
  });

  test('division by zero, unknown names, code and huge powers are errors', () => {
    expect(() => evaluateExactly('7 / 0')).toThrow('division by zero');
    expect(() => evaluateExactly('x + 1')).toThrow(/not a number/);
    expect(() => evaluateExactly('abs(x)')).toThrow(/not a number/);
    expect(() => evaluateExactly('import("fs")')).toThrow(/not supported/);
    expect(() => evaluateExactly('a = 3')).toThrow(/not arithmetic/);
    expect(() => evaluateExactly('(2^3)^2')).toThrow(/power of a power/);
    expect(() => evaluateExactly(`2^${MAX_EXPONENT + 1}`)).toThrow(/at most/);
    expect(() => evaluateExactly('2^(1/2)')).toThrow(/whole numbers/);
    expect(() => evaluateExactly('1 +')).toThrow(/cannot parse/);
  });

  test('through the registry an error is the text the agent reads', async () => {
    const registry = new ToolRegistry([calculatorTool], { timeoutMs: 1000, maxOutputChars: 200 });
    const session = new ToolSession();
    expect(await registry.run({ name: 'calculator', arguments: { expression: '7/0' } }, session)).toEqual({
      ok: false,
      name: 'calculator',
      kind: 'failed',
      text: 'error: division by zero',
    });
    expect(await registry.run({ name: 'calculator', arguments: '{"expression": "6*7"}' }, session)).toEqual({
      ok: true,
      name: 'calculator',
      text: '42',
    });
  });
});
