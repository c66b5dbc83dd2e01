import { describe, expect, test } from '@jest/globals';
import { defineTool, parseToolCallText, z } from '@drmas/core';
import { calculatorTool, ToolRegistry, ToolSession } from '../src/index.js';

let aborted: unknown;
const slow = defineTool({
  name: 'slow',
  description: 'never answers',
  input: z.strictObject({}),
  timeoutMs: 50,
  run: (_input, { signal }) =>
    new Promise<string>((resolve) => {
      signal.addEventListener('abort', () => {
        aborted = signal.reason;
        resolve('too late');
      });
    }),
});
const broken = defineTool({
  name: 'broken',
  description: 'throws',
  input: z.strictObject({}),
  run: () => {
    throw new Error('disk on fire');
  },
});
const echo = defineTool({
  name: 'echo',
  description: 'repeats text',
  input: z.strictObject({ text: z.string(), times: z.number().int().min(1).max(3).default(1) }),
  run: ({ text, times }) => text.repeat(times),
});

const registry = new ToolRegistry([calculatorTool, slow, broken, echo] as never[], { timeoutMs: 1000, maxOutputChars: 24 });
const session = new ToolSession();

describe('ToolRegistry: bad calls are tool errors, never exceptions', () => {
  test('an unknown tool names the closest ones', async () => {
    const outcome = await registry.run({ name: 'calculater', arguments: {} }, session);
    expect(outcome).toEqual({
      ok: false,
      kind: 'unknown_tool',
      text: 'error: no tool is called "calculater". Did you mean "calculator"? Tools: calculator, slow, broken, echo',
    });
  });

  test('invalid arguments carry zod issues with their paths', async () => {
    const outcome = await registry.run({ name: 'echo', arguments: { text: 3, times: 9 } }, session);
    expect(outcome.ok).toBe(false);
    expect(outcome).toMatchObject({ kind: 'invalid_arguments' });
    expect(outcome.text).toMatch(/^error: invalid arguments for echo: text: .*expected string.*; times: .*<=3/);
  });

  test('a call past its time limit is a timeout and its signal is aborted', async () => {
    const started = Date.now();
    const outcome = await registry.run({ name: 'slow', arguments: {} }, session);
    expect(outcome).toEqual({ ok: false, name: 'slow', kind: 'timeout', text: 'error: slow took longer than 50 ms' });
    expect(Date.now() - started).toBeLessThan(900);
    expect(String(aborted)).toMatch(/time limit of 50 ms/);
  });

  test('a handler that throws, a malformed call, and an over-long result', async () => {
    expect(await registry.run({ name: 'broken', arguments: {} }, session)).toEqual({
      ok: false,
      name: 'broken',
      kind: 'failed',
      text: 'error: disk on fire',
    });
    const [block] = parseToolCallText('<tool_call>{"name": "echo", "arguments": {</tool_call>').blocks;
    expect(await registry.call(block!, session)).toMatchObject({
      ok: false,
      kind: 'malformed',
      text: expect.stringMatching(/^error: the tool call is not valid JSON/),
    });
    expect(await registry.run({ name: 'echo', arguments: { text: 'abcdefghijklm', times: 2 } }, session)).toEqual({
      ok: true,
      name: 'echo',
      text: 'abcdefghijklmabcdefghijk ... (2 more characters cut)',
    });
  });

  test('schemas: JSON schema of each input, as templates and OpenAI clients take them', () => {
    const echoSchema = registry.schemas().find((s) => s.function.name === 'echo')!;
    expect(echoSchema).toEqual({
      type: 'function',
      function: {
        name: 'echo',
        description: 'repeats text',
        parameters: {
          type: 'object',
          properties: { text: { type: 'string' }, times: { type: 'integer', minimum: 1, maximum: 3, default: 1 } },
          required: ['text'],
          additionalProperties: false,
        },
      },
    });
    expect(registry.listing().split('\n')[3]).toBe('echo {"text": string, "times": integer}: repeats text');
  });

  test('two tools of one name are refused', () => {
    expect(() => new ToolRegistry([echo, echo] as never[], { timeoutMs: 1, maxOutputChars: 1 })).toThrow(/two tools are called "echo"/);
  });
});
