import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { PyodideSandbox, QuickJsSandbox, jsonValuesEqual, type CodeLanguage, type CodeSandbox, type CodeTest } from '../src/index.js';
import { callMismatch } from '../src/sandbox/compareOutputs.js';
import { decodePlain, encodePlain, NotPlainData } from '../src/sandbox/plainData.js';

describe('plain data on the host', () => {
  test('tuples become arrays and dict keys become JSON keys, as json.dumps writes them', () => {
    expect(decodePlain('{"$":"tuple","v":[1,[2.5,"é"],null]}')).toEqual([1, [2.5, 'é'], null]);
    expect(decodePlain('{"$":"dict","v":[[1,"a"],[true,"b"],[null,"c"],["k",{"$":"dict","v":[]}]]}')).toEqual({
      '1': 'a',
      true: 'b',
      null: 'c',
      k: {},
    });
    expect(decodePlain('{"$":"dict","v":[["__proto__",1]]}')).toEqual(JSON.parse('{"__proto__":1}'));
    expect(decodePlain('[{"$":"float","v":"nan"},{"$":"float","v":"-inf"},{"$":"bigint","v":"100000000000000000000"}]')).toEqual([
      NaN,
      -Infinity,
      1e20,
    ]);
  });

  test('what JSON cannot hold, and what is not plain data, is a NotPlainData equal to nothing', () => {
    expect(decodePlain('{"$":"ref","id":0,"type":"Anything"}')).toEqual(new NotPlainData('Anything'));
    expect(decodePlain('{"$":"opaque","type":"Map"}')).toEqual(new NotPlainData('Map'));
    expect(decodePlain('{"$":"set","v":[1]}')).toEqual(new NotPlainData('set'));
    expect(decodePlain('{"$":"dict","v":[[{"$":"tuple","v":[1,2]},3]]}')).toEqual(new NotPlainData('dict whose keys JSON cannot hold'));
    // An object without a tag is not something an engine writes: a forged report is not plain data either.
    expect(decodePlain('{"a":1}')).toEqual(new NotPlainData('malformed value'));
    expect(decodePlain('{"v":')).toEqual(new NotPlainData('malformed report'));
    const notPlain = new NotPlainData('Anything');
    expect([jsonValuesEqual(notPlain, {}), jsonValuesEqual([notPlain], [{}]), jsonValuesEqual(notPlain, notPlain)]).toEqual([
      false,
      false,
      false,
    ]);
  });

  test('a call test reads the plain-data text; the feedback names what is not plain data', () => {
    expect(callMismatch('{"$":"tuple","v":[3,9]}', [3, 9])).toBeUndefined();
    expect(callMismatch('0.30000000000000004', 0.3)).toBeUndefined();
    expect(callMismatch('{"$":"ref","id":0,"type":"Anything"}', 9)).toBe('expected 9, got a Anything, which is not plain data');
    expect(callMismatch('[1,{"$":"opaque","type":"getter"}]', [1, 2])).toBe('expected [1,2], got [1,"<getter>"]');
  });

  test("a test's arguments are written as plain data", () => {
    expect(encodePlain([1, 'x', { a: [true, null], b: {} }, -Infinity])).toBe(
      '[1,"x",{"$":"dict","v":[["a",[true,null]],["b",{"$":"dict","v":[]}]]},{"$":"float","v":"-inf"}]',
    );
  });
});

/**
 * Each engine's conversion, judged by `call` tests whose expected values are written by hand: what a function
 * returns and whether it is equal to the expected JSON value once converted without calling any of its hooks.
 */
interface Conversion {
  returns: string;
  expected: unknown;
  passes: boolean;
}

const PYTHON: Conversion[] = [
  { returns: '(1, 2)', expected: [1, 2], passes: true },
  { returns: "{1: 'a', 2.5: 'b', None: 'c', False: 'd'}", expected: { '1': 'a', '2.5': 'b', null: 'c', false: 'd' }, passes: true },
  { returns: '2 ** 70', expected: 1180591620717411303424, passes: true },
  { returns: "'é😀'", expected: 'é😀', passes: true },
  { returns: '0.1 + 0.2', expected: 0.3, passes: true },
  { returns: 'None', expected: null, passes: true },
  { returns: "float('nan')", expected: null, passes: false },
  { returns: '{1, 2}', expected: [1, 2], passes: false },
  { returns: 'True', expected: 1, passes: false },
  { returns: "b'ab'", expected: 'ab', passes: false },
  { returns: "{(1, 2): 'pair'}", expected: { '1,2': 'pair' }, passes: false },
  { returns: 'type("Int", (int,), {})(3)', expected: 3, passes: false },
  { returns: '[1, object()]', expected: [1, {}], passes: false },
];

const JAVASCRIPT: Conversion[] = [
  { returns: '[1, [2, "é😀"]]', expected: [1, [2, 'é😀']], passes: true },
  { returns: '{ b: 1, a: [null, undefined] }', expected: { a: [null, null], b: 1 }, passes: true },
  { returns: '{ a: 1, gone: undefined }', expected: { a: 1 }, passes: true },
  { returns: '2n ** 70n', expected: 1180591620717411303424, passes: true },
  { returns: '0.1 + 0.2', expected: 0.3, passes: true },
  { returns: 'NaN', expected: null, passes: false },
  { returns: 'new Map([[1, 2]])', expected: {}, passes: false },
  { returns: 'new (class Point { constructor() { this.x = 1; } })()', expected: { x: 1 }, passes: false },
  { returns: '{ get x() { return 1; } }', expected: { x: 1 }, passes: false },
  { returns: 'new Proxy({ x: 1 }, {})', expected: { x: 1 }, passes: false },
  { returns: '[1, () => 2]', expected: [1, null], passes: false },
  { returns: 'Object.assign(Object.create({ inherited: 1 }), { own: 2 })', expected: { own: 2 }, passes: false },
];

const ENGINES: Array<{ language: CodeLanguage; make: () => CodeSandbox & { warm(): Promise<void> }; cases: Conversion[] }> = [
  { language: 'python', make: () => new PyodideSandbox(), cases: PYTHON },
  { language: 'javascript', make: () => new QuickJsSandbox(), cases: JAVASCRIPT },
];

describe.each(ENGINES)('plain data from $language', ({ language, make, cases }) => {
  const sandbox = make();
  beforeAll(() => sandbox.warm(), 120_000);
  afterAll(() => sandbox.dispose());

  test('values of exact built-in types convert; anything else equals nothing', async () => {
    const code = cases
      .map((c, i) =>
        language === 'python' ? `def value${i}():\n    return ${c.returns}` : `function value${i}() { return ${c.returns}; }`,
      )
      .join('\n');
    const tests: CodeTest[] = cases.map((c, i) => ({ name: c.returns, kind: 'call', fn: `value${i}`, args: [], expected: c.expected }));
    const run = await sandbox.run({ language, code, tests });
    expect(run.tests.map((t) => [t.name, t.passed])).toEqual(cases.map((c) => [c.returns, c.passes]));
  }, 60_000);
});
