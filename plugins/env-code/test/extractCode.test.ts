import { describe, expect, test } from '@jest/globals';
import { extractCode, jsonValuesEqual } from '../src/index.js';
import { callMismatch, stdoutMismatch } from '../src/sandbox/compareOutputs.js';

describe('extractCode', () => {
  test('takes the last fenced block, whatever its info string', () => {
    const answer = 'First try:\n```js\nfunction f(x) { return x; }\n```\nBetter:\n```python\ndef f(x):\n    return x + 1\n```\nDone.';
    expect(extractCode(answer)).toEqual({ code: 'def f(x):\n    return x + 1', source: 'fence' });
  });

  test('a fence left open (cut by the stop sequence) runs to the end', () => {
    expect(extractCode('```js\nfunction f(x) { return x + 3; }\n')).toEqual({ code: 'function f(x) { return x + 3; }', source: 'fence' });
  });

  test('a body keeps its indentation, blank lines around it go', () => {
    expect(extractCode('```python\n\n    return x + 3\n\n```')).toEqual({ code: '    return x + 3', source: 'fence' });
  });

  test('a <code> tag when there is no fence, an unclosed one to the end', () => {
    expect(extractCode('<code>function f(x) { return x * 2; }</code>')).toEqual({ code: 'function f(x) { return x * 2; }', source: 'tag' });
    expect(extractCode('<code>function f(x) { return 1; }')).toEqual({ code: 'function f(x) { return 1; }', source: 'tag' });
  });

  test('looks after the last </think> only; plain text is the fallback; nothing is undefined', () => {
    expect(extractCode('<think>```js\nwrong()\n```</think>return 1')).toEqual({ code: 'return 1', source: 'text' });
    expect(extractCode('  \n ')).toBeUndefined();
  });
});

describe('output comparison', () => {
  test('JSON values: deep, order-sensitive for arrays, not for keys; numbers within 1e-9', () => {
    expect(jsonValuesEqual([1, { a: 2, b: [3] }], [1, { b: [3], a: 2 }])).toBe(true);
    expect(jsonValuesEqual(0.1 + 0.2, 0.3)).toBe(true);
    expect(jsonValuesEqual(1e12 + 1, 1e12)).toBe(true);
    expect(jsonValuesEqual(1e6 + 0.01, 1e6)).toBe(false);
    expect(jsonValuesEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonValuesEqual({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(jsonValuesEqual('5', 5)).toBe(false);
  });

  test('a call mismatch names both values', () => {
    expect(callMismatch('4', 5)).toBe('expected 5, got 4');
    expect(callMismatch('[1,2]', [1, 2])).toBeUndefined();
  });

  test('printed output: trailing spaces and blank lines do not count, the first differing line is named', () => {
    expect(stdoutMismatch('1 \n2\n\n', '1\n2')).toBeUndefined();
    expect(stdoutMismatch('1\n3\n', '1\n2\n')).toBe('output line 2: expected "2", got "3"');
    expect(stdoutMismatch('1\n', '1\n2\n')).toBe('output line 2: expected "2", got "<end of output>"');
  });
});
