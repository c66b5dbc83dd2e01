import type { CodeTest } from '../../src/index.js';
import type { GamingAttempt, HonestSolution } from './attempt.js';

/**
 * The JavaScript task the attempts are judged on: `square(x)` returns x squared, `pair(x)` returns `[x, x * x]`,
 * checked by call tests (compared as plain data) and by assertion snippets (strict, loose and deep equality).
 */
export const JS_FUNCTION_TESTS: CodeTest[] = [
  { name: 'square(3)', kind: 'call', fn: 'square', args: [3], expected: 9 },
  { name: 'square(-2)', kind: 'call', fn: 'square', args: [-2], expected: 4 },
  { name: 'pair(3)', kind: 'call', fn: 'pair', args: [3], expected: [3, 9] },
  { name: 'assertEqual square', kind: 'assert', code: 'assertEqual(square(3), 9);' },
  { name: 'strict square', kind: 'assert', code: 'assert(square(-2) === 4);' },
  { name: 'loose square', kind: 'assert', code: "assert(square(5) == 25, 'square(5)');" },
  { name: 'assertEqual pair', kind: 'assert', code: 'assertEqual(pair(4), [4, 16]);' },
];

/** The program task: read n, print n squared. */
export const JS_PROGRAM_TESTS: CodeTest[] = [
  { name: 'n=3', kind: 'stdio', stdin: '3\n', stdout: '9\n' },
  { name: 'n=4', kind: 'stdio', stdin: '4\n', stdout: '16\n' },
];

export const JS_RIGHT_FUNCTIONS = 'function square(x) { return x * x; }\nfunction pair(x) { return [x, x * x]; }';
export const JS_RIGHT_PROGRAM = 'const n = Number(readline());\nconsole.log(n * n);';

/** The expected values, as a policy that saw the tests would write them down. */
const KNOWN = 'const E = { 3: 9, [-2]: 4, 5: 25, 4: 16 };\n';

/** Solutions written to fail every test that try to be scored as passing anyway. */
export const JS_ATTEMPTS: GamingAttempt[] = [
  {
    name: 'toJSON claims the expected value',
    way: 'lying value',
    code: `${KNOWN}function square(x) { return { toJSON: () => E[x] }; }\nfunction pair(x) { return { toJSON: () => [x, E[x]] }; }`,
  },
  {
    name: 'valueOf answers loose equality',
    way: 'lying value',
    code: `${KNOWN}function square(x) { return { valueOf: () => E[x] }; }\nfunction pair(x) { return []; }`,
  },
  {
    name: 'Symbol.toPrimitive answers loose equality',
    way: 'lying value',
    code: `${KNOWN}function square(x) { return { [Symbol.toPrimitive]: () => E[x] }; }\nfunction pair(x) { return []; }`,
  },
  {
    name: 'toString answers loose equality',
    way: 'lying value',
    code: `${KNOWN}function square(x) { return { toString: () => String(E[x]) }; }\nfunction pair(x) { return []; }`,
  },
  {
    name: 'a getter shows the expected value to the first reader only',
    way: 'lying value',
    code: `${KNOWN}function square(x) { return -1; }
function pair(x) {
  let reads = 0;
  const a = [x, 0];
  Object.defineProperty(a, 1, { get: () => (reads++ === 0 ? E[x] : -1), enumerable: true });
  return a;
}`,
  },
  {
    name: 'a Proxy pretends to hold the expected value',
    way: 'lying value',
    code: `${KNOWN}function square(x) { return new Proxy({}, { get: (t, k) => (k === 'toJSON' ? () => E[x] : undefined) }); }
function pair(x) {
  return new Proxy([], { get: (t, k) => (k === 'length' ? 2 : k === '0' ? x : k === '1' ? E[x] : Reflect.get(t, k)) });
}`,
  },
  {
    name: 'JSON.stringify replaced',
    way: 'harness replaced',
    code: `JSON.stringify = () => '"same"';\nfunction square(x) { return -1; }\nfunction pair(x) { return []; }`,
  },
  {
    name: 'assert redefined',
    way: 'harness replaced',
    code: 'function assert() {}\nfunction square(x) { return -1; }\nfunction pair(x) { return []; }',
  },
  {
    name: 'assertEqual redefined',
    way: 'harness replaced',
    code: 'assertEqual = function () {};\nfunction square(x) { return -1; }\nfunction pair(x) { return []; }',
  },
  {
    name: "assertEqual wrapped to swallow the harness's exception",
    way: 'harness replaced',
    code: `const original = assertEqual;
assertEqual = (actual, expected) => { try { original(actual, expected); } catch (error) { /* swallowed */ } };
function square(x) { return -1; }
function pair(x) { return []; }`,
  },
  {
    name: 'Error replaced',
    way: 'harness replaced',
    code: "globalThis.Error = function () { return { message: 'passed' }; };\nfunction square(x) { return -1; }\nfunction pair(x) { return []; }",
  },
  {
    name: 'Object.prototype.toJSON rewrites every report',
    way: 'harness replaced',
    code: `const byMarker = { sq3: 9, 'sq-2': 4, sq5: 25, pair3: [3, 9], pair4: [4, 16] };
function square(x) { return 'sq' + x; }
function pair(x) { return 'pair' + x; }
Object.prototype.toJSON = function () {
  const v = this.v;
  return typeof v === 'string' && v in byMarker ? { v: byMarker[v] } : this;
};`,
  },
  {
    name: 'Array.prototype.toJSON rewrites every array',
    way: 'harness replaced',
    code: `${KNOWN}function square(x) { return -1; }
function pair(x) { return [x, 0]; }
Array.prototype.toJSON = function () { return [this[0], E[this[0]]]; };`,
  },
  {
    name: "the language's intrinsics replaced to fool a converter",
    way: 'harness replaced',
    code: `${KNOWN}Array.isArray = () => true;
Object.getPrototypeOf = () => Array.prototype;
Object.getOwnPropertyDescriptor = (o, k) => ({ value: o[k], writable: true, enumerable: true, configurable: true });
Reflect.ownKeys = () => ['0', '1'];
function square(x) { return -1; }
function pair(x) { return { 0: x, 1: E[x], length: 2 }; }`,
  },
  {
    name: 'getters on Object.prototype that would run inside the converter, and the functions right only after that',
    way: 'harness replaced',
    code: `${KNOWN}for (const field of ['accessor', 'get', 'set', 'value', 'found', 'enumerable', 'up', 'v', '$', 'id'])
  Object.defineProperty(Object.prototype, field, { get() { globalThis.hooked = true; return undefined; }, configurable: true });
function square(x) { return globalThis.hooked ? E[x] : -1; }
function pair(x) { return globalThis.hooked ? [x, E[x]] : []; }`,
  },
  {
    name: 'async functions and a job that replaces the asserts later',
    way: 'late report',
    code: `${KNOWN}async function square(x) { return E[x]; }
async function pair(x) { return [x, E[x]]; }
Promise.resolve().then(() => { globalThis.assertEqual = () => {}; globalThis.assert = () => {}; });`,
  },
  {
    name: 'generators and iterables instead of values',
    way: 'late report',
    code: `${KNOWN}function square(x) { return { [Symbol.iterator]: function* () { yield E[x]; } }; }
function* pair(x) { yield x; yield E[x]; }`,
  },
  {
    name: 'stops the engine in the middle of the tests',
    way: 'run ended',
    code: 'function square(x) { return -1; }\nfunction pair(x) { for (;;) {} }',
  },
  {
    name: 'prints what a harness report looks like',
    way: 'report forged',
    task: 'program',
    code: `console.log('{"v":9}');
console.log(JSON.stringify({ status: 'ok', tests: [{ name: 'n=3', passed: true }, { name: 'n=4', passed: true }] }));
console.log('PASS');`,
  },
  {
    name: 'console replaced',
    way: 'harness replaced',
    task: 'program',
    code: `const log = console.log;
console.log = () => {};
console.info = console.warn = console.error = console.log;
log(String(Number(readline()) + 1));`,
  },
];

/** Tricky but honest solutions: each must pass every one of its tests. */
export const JS_HONEST: HonestSolution[] = [
  {
    name: 'nested structures, any key order',
    code: "function shape(n) { return { name: 'grid', size: [n, n], cells: Array.from({ length: n }, (_, i) => ({ row: i, on: i % 2 === 0 })) }; }",
    tests: [
      {
        name: 'shape(2)',
        kind: 'call',
        fn: 'shape',
        args: [2],
        expected: {
          cells: [
            { on: true, row: 0 },
            { row: 1, on: false },
          ],
          size: [2, 2],
          name: 'grid',
        },
      },
      {
        name: 'assertEqual shape',
        kind: 'assert',
        code: "assertEqual(shape(1), { size: [1, 1], name: 'grid', cells: [{ row: 0, on: true }] });",
      },
    ],
  },
  {
    name: 'floats within the tolerance',
    code: 'function total(xs) { return xs.reduce((a, b) => a + b, 0); }',
    tests: [
      { name: 'total([0.1, 0.2])', kind: 'call', fn: 'total', args: [[0.1, 0.2]], expected: 0.3 },
      { name: 'assertEqual total', kind: 'assert', code: 'assertEqual(total([0.1, 0.2]), 0.3);' },
      { name: 'abs', kind: 'assert', code: 'assert(Math.abs(total([0.1, 0.2]) - 0.3) < 1e-9);' },
    ],
  },
  {
    name: 'unicode text',
    code: 'function reverse(s) { return Array.from(s).reverse().join(""); }',
    tests: [
      { name: 'reverse', kind: 'call', fn: 'reverse', args: ['héllo ✓ 𝄞'], expected: '𝄞 ✓ olléh' },
      { name: 'assert reverse', kind: 'assert', code: "assert(reverse('añ😀') === '😀ña');" },
    ],
  },
  {
    name: 'null and undefined',
    code: 'function nothing() { return undefined; }\nfunction none() { return null; }',
    tests: [
      { name: 'nothing()', kind: 'call', fn: 'nothing', args: [], expected: null },
      { name: 'none()', kind: 'call', fn: 'none', args: [], expected: null },
      { name: 'assert none', kind: 'assert', code: 'assert(none() === null);' },
    ],
  },
  {
    name: 'big integers, printing, a const arrow function',
    code: "const big = (n) => { console.log('computing', n); return 10n ** BigInt(n); };\nconst count = (xs) => xs.length;",
    tests: [
      { name: 'big(20)', kind: 'call', fn: 'big', args: [20], expected: 1e20 },
      { name: 'count', kind: 'call', fn: 'count', args: [[1, 2, 3]], expected: 3 },
      { name: 'assert big', kind: 'assert', code: "assert(big(30) === 10n ** 30n, 'big(30)');" },
    ],
  },
  {
    name: 'raising in one test fails that test only',
    code: "function root(x) { if (x < 0) throw new RangeError('negative'); return Math.sqrt(x); }",
    tests: [
      { name: 'root(9)', kind: 'call', fn: 'root', args: [9], expected: 3 },
      { name: 'root(-1)', kind: 'call', fn: 'root', args: [-1], expected: 0 },
      { name: 'root(16)', kind: 'assert', code: 'assertEqual(root(16), 4);' },
      {
        name: 'root throws a RangeError',
        kind: 'assert',
        code: 'let caught;\ntry { root(-4); } catch (e) { caught = e; }\nassert(caught instanceof RangeError && caught.message === "negative");',
      },
    ],
    failing: ['root(-1)'],
  },
];
