import { afterAll, expect, test } from '@jest/globals';
import { CodeSandboxes } from '@drmas/plugin-env-code';
import { pythonTool, ToolRegistry, ToolSession } from '../src/index.js';
import { describeSlow } from '../../../test/support/describeSlow.js';

// Pyodide takes seconds to load, so these run with the slow tests.
const sandboxes = new CodeSandboxes();
afterAll(() => sandboxes.dispose());
const tool = pythonTool({ sandbox: () => sandboxes, limits: () => ({ timeoutMs: 2000, memoryBytes: 64 * 1024 * 1024 }) });
const registry = new ToolRegistry([tool], { timeoutMs: 1000, maxOutputChars: 2000 });
const python = async (session: ToolSession, code: string) => (await registry.run({ name: 'python', arguments: { code } }, session)).text;

describeSlow('python: a REPL whose state lasts the episode', () => {
  test('names, functions and imports carry over within an episode, never to another', async () => {
    const first = new ToolSession();
    const second = new ToolSession();
    expect(await python(first, 'x = 21\nimport math')).toBe('(no output)');
    expect(await python(first, 'def double(n):\n    return 2 * n')).toBe('(no output)');
    expect(await python(first, 'print("x is", x)\ndouble(x)')).toBe('x is 21\n42');
    expect(await python(first, 'math.factorial(20)')).toBe('2432902008176640000');
    expect(await python(second, 'x')).toBe("NameError: name 'x' is not defined");
  }, 120_000);

  test('a failing cell is reported and left out of the history; a cell past its limit is a timeout', async () => {
    const session = new ToolSession();
    expect(await python(session, 'y = 1')).toBe('(no output)');
    expect(await python(session, 'y = 2\nraise ValueError("no")')).toBe('ValueError: no');
    // The failed cell's `y = 2` is not replayed.
    expect(await python(session, 'y')).toBe('1');
    expect(await python(session, 'while True: pass')).toBe('error: the code ran longer than 2000 ms');
    expect(await python(session, 'y + 1')).toBe('2');
  }, 120_000);
});
