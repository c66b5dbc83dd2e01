import { describe, expect, test } from '@jest/globals';
import { createKernel, defineTool, DrmasError, Environment, Tool, z, type Plugin } from '@drmas/core';
import { EnvToolsPlugin, type ToolEnvironment } from '../src/index.js';

// A third party's plugin adding a tool: a contribution to the `Tool` role, chosen by env.tools.enabled, with tasks of
// its own kind (`env.tools.kinds`).
const WORDS = ['drawer', 'stressed', 'parts', 'lager'];
const reverseTool = defineTool({
  name: 'reverse',
  description: 'reverses text',
  input: z.strictObject({ text: z.string() }),
  tasks: {
    kind: 'reversal',
    draw: (random) => {
      const word = random.pick(WORDS);
      const answer = [...word].reverse().join('');
      return {
        key: `reversal/${word}`,
        task: {
          dataSource: 'tools-reversal',
          question: `What is ${word} backwards?`,
          answer,
          solution: { name: 'reverse', arguments: { text: word } },
        },
      };
    },
  },
  run: ({ text }) => [...text].reverse().join(''),
});
const reversePlugin: Plugin = {
  name: 'reverse-tool',
  register: (ctx) => ctx.provide(Tool, 'reverse', reverseTool),
  apply() {},
};

const kernelWith = (enabled: string[], kinds = ['file']) =>
  createKernel({
    cwd: process.cwd(),
    inline: {
      plugins: [new EnvToolsPlugin(), reversePlugin],
      env: { name: 'tools', tools: { enabled, kinds, trainSize: 4, testSize: 1 } },
    },
  });

describe('env-tools in a kernel', () => {
  test("a plugin's tool is offered beside the built-ins and runs in the episode", async () => {
    const { kernel } = await kernelWith(['fs', 'reverse']);
    const env = kernel.getNamed(Environment, 'tools') as ToolEnvironment;
    await env.init();
    expect(env.tools.names).toEqual(['fs', 'reverse']);
    const episode = env.reset(env.batch(0, 1).tasks[0]!);
    await env.advance(
      [episode],
      [{ type: 'answer', content: '<tool_call>{"name": "reverse", "arguments": {"text": "drawer"}}</tool_call>' }],
    );
    expect(episode.observation()).toContain('<tool_response>reward</tool_response>');
  });

  test("a plugin's tool brings its own kind of task, drawn beside the built-ins' and answered by the tool", async () => {
    const { kernel } = await kernelWith(['reverse'], ['arithmetic', 'reversal']);
    const env = kernel.getNamed(Environment, 'tools') as ToolEnvironment;
    await env.init();
    const tasks = env.batch(0, 40).tasks;
    expect(new Set(tasks.map((t) => t.dataSource))).toEqual(new Set(['tools-arithmetic', 'tools-reversal']));
    for (const task of tasks.filter((t) => t.dataSource === 'tools-reversal')) {
      const episode = env.reset(task);
      await env.advance([episode], [{ type: 'answer', content: `<tool_call>${JSON.stringify(task.solution)}</tool_call>` }]);
      expect(episode.observation()).toContain(`<tool_response>${task.answer}</tool_response>`);
    }
  });

  test('a task kind no tool offers stops the run at validate, naming env.tools.kinds', async () => {
    const error = await kernelWith(['fs'], ['revesal']).catch((e: unknown) => e);
    expect(DrmasError.is(error) && { code: error.code, key: error.key, hint: error.hint }).toEqual({
      code: 'UNKNOWN_NAME',
      key: 'env.tools.kinds',
      hint: 'Did you mean "reversal"?',
    });
  });

  test('a misspelt tool stops the run at validate, with the names registered', async () => {
    const error = await kernelWith(['fs', 'revers']).catch((e: unknown) => e);
    expect(DrmasError.is(error) && { code: error.code, key: error.key }).toEqual({ code: 'UNKNOWN_NAME', key: 'env.tools.enabled' });
    expect((error as Error).message).toMatch(/revers/);
    expect(`${(error as Error).message} ${(error as DrmasError).hint ?? ''}`).toMatch(/"reverse"/);
  });
});
