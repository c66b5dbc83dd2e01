import { describe, expect, test } from '@jest/globals';
import { createKernel, DrmasError, Environment, z, type Plugin } from '@drmas/core';
import { defineTool, EnvToolsPlugin, Tool, type ToolEnvironment } from '../src/index.js';

// A third party's plugin adding a tool: a contribution to the `Tool` role, chosen by env.tools.enabled.
const reverseTool = defineTool({
  name: 'reverse',
  description: 'reverses text',
  input: z.strictObject({ text: z.string() }),
  run: ({ text }) => [...text].reverse().join(''),
});
const reversePlugin: Plugin = {
  name: 'reverse-tool',
  register: (ctx) => ctx.provide(Tool, 'reverse', reverseTool),
  apply() {},
};

const kernelWith = (enabled: string[]) =>
  createKernel({
    cwd: process.cwd(),
    inline: {
      plugins: [new EnvToolsPlugin(), reversePlugin],
      env: { name: 'tools', tools: { enabled, kinds: ['file'], trainSize: 4, testSize: 1 } },
    },
  });

describe('env-tools in a kernel', () => {
  test("a plugin's tool is offered beside the built-ins and runs in the episode", async () => {
    const { kernel } = await kernelWith(['fs', 'reverse']);
    const env = kernel.getNamed(Environment, 'tools') as ToolEnvironment;
    await env.init();
    expect(env.tools.names).toEqual(['fs', 'reverse']);
    const episode = env.reset(env.batch(0, 1).tasks[0]!);
    await env.step([episode], [{ type: 'answer', content: '<tool_call>{"name": "reverse", "arguments": {"text": "drawer"}}</tool_call>' }]);
    expect(episode.observation()).toContain('<tool_response>reward</tool_response>');
  });

  test('a misspelt tool stops the run at validate, with the names registered', async () => {
    const error = await kernelWith(['fs', 'revers']).catch((e: unknown) => e);
    expect(DrmasError.is(error) && { code: error.code, key: error.key }).toEqual({ code: 'UNKNOWN_NAME', key: 'env.tools.enabled' });
    expect((error as Error).message).toMatch(/revers/);
    expect(`${(error as Error).message} ${(error as DrmasError).hint ?? ''}`).toMatch(/"reverse"/);
  });
});
