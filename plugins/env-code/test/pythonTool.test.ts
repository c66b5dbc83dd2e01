import { afterAll, expect, test } from '@jest/globals';
import type { ToolContext } from '@drmas/core';
import { CodeSandboxes, pythonTool } from '../src/index.js';
import { describeSlow } from '../../../test/support/describeSlow.js';

// Pyodide takes seconds to load, so these run with the slow tests.
const sandboxes = new CodeSandboxes();
afterAll(() => sandboxes.dispose());
const tool = pythonTool({ sandbox: () => sandboxes, limits: () => ({ timeoutMs: 2000, memoryBytes: 64 * 1024 * 1024 }) });

/** One episode's tool context: its state kept across calls, as a tool-use environment keeps it. */
class ToolSession implements ToolContext {
  readonly signal = new AbortController().signal;
  readonly timeoutMs = tool.timeoutMs!;
  readonly taskFiles = {};
  private readonly state = new Map<string, unknown>();
  readonly episodeState = <S>(key: string, create: () => S): S => {
    if (!this.state.has(key)) this.state.set(key, create());
    return this.state.get(key) as S;
  };
}

/** What the agent reads: the tool's text, or its error (a tool-use environment prefixes `error: `). */
const python = async (session: ToolSession, code: string) => {
  try {
    return await tool.run({ code }, session);
  } catch (error) {
    return `error: ${(error as Error).message}`;
  }
};

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
