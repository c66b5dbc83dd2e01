import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import OpenAI from 'openai';
import { generateText, stepCountIs, tool } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { z } from '@drmas/core';
import { Tokenizer } from '@drmas/models';
import { TeacherBackend } from '@drmas/plugin-orchestra';
import { GatewayServer, ServedModels } from '../src/index.js';
import { parseToolCalls } from '../src/server/toolCalls.js';

// Tool calls end to end: the math base checkpoint's tokenizer with a Hermes-style tool template (as Qwen2.5's, reduced),
// and a scripted engine (the orchestra's TeacherBackend, which writes demonstrations) that calls `get_weather` until it
// sees a tool response, then answers. The prompts it receives are what the template rendered.
const BASE = 'presets/math/checkpoints/base/policy';
const TOOL_TEMPLATE =
  "{%- if tools %}{{- '<|im_start|>system\\nTools:' }}{%- for tool in tools %}{{- '\\n' + (tool.function.name) }}{%- endfor %}{{- '<|im_end|>\\n' }}{%- endif %}" +
  "{%- for message in messages %}{%- if message.role == 'assistant' and message.tool_calls %}{{- '<|im_start|>assistant\\n' }}" +
  "{%- for call in message.tool_calls %}{{- '<tool_call>\\n{\"name\": \"' + call.function.name + '\", \"arguments\": ' + (call.function.arguments | tojson) + '}\\n</tool_call>' }}{%- endfor %}{{- '<|im_end|>\\n' }}" +
  "{%- elif message.role == 'tool' %}{{- '<|im_start|>user\\n<tool_response>\\n' + message.content + '\\n</tool_response><|im_end|>\\n' }}" +
  "{%- else %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}{%- endif %}{%- endfor %}" +
  "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";
const CALL = 'Let me look.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
const WEATHER_TOOL = {
  type: 'function' as const,
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

const prompts: string[] = [];
let server: GatewayServer;
let baseURL: string;

beforeAll(async () => {
  const read = (file: string) => JSON.parse(readFileSync(path.join(BASE, file), 'utf8')) as Record<string, unknown>;
  const tokenizer = Tokenizer.fromJSON(read('tokenizer.json') as never, { ...read('tokenizer_config.json'), chat_template: TOOL_TEMPLATE });
  const engine = new TeacherBackend(tokenizer, (prompt) => {
    prompts.push(prompt);
    return prompt.includes('<tool_response>') ? 'It is 21 degrees in Paris.' : CALL;
  });
  const models = new ServedModels([{ id: 'policy', agents: ['caller'], trainer: engine, rollout: engine, codec: tokenizer }], {
    windowMs: 1,
    maxBatch: 8,
  });
  server = new GatewayServer(models, { host: '127.0.0.1', port: 0 });
  baseURL = `${await server.start()}/v1`;
});
afterAll(async () => server?.stop());

describe('tool calls (Hermes format)', () => {
  test('the openai client: a call parsed out of the text, then the tool result rendered back into the prompt', async () => {
    const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await client.chat.completions.create({ model: 'caller', messages, tools: [WEATHER_TOOL] });
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBe('Let me look.');
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0]! as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    expect(call.function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(prompts.at(-1)).toBe(
      '<|im_start|>system\nTools:\nget_weather<|im_end|>\n<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n',
    );

    messages.push(choice.message, { role: 'tool', tool_call_id: call.id, content: '{"temp": 21}' });
    const second = await client.chat.completions.create({ model: 'caller', messages, tools: [WEATHER_TOOL] });
    expect(second.choices[0]!.message.content).toBe('It is 21 degrees in Paris.');
    expect(second.choices[0]!.finish_reason).toBe('stop');
    // The earlier call went back to the template with its arguments as an object (tojson writes it as JSON, not a string).
    expect(prompts.at(-1)).toContain('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>\n');
    expect(prompts.at(-1)).toContain('<tool_response>\n{"temp": 21}\n</tool_response>');
  });

  test('streaming: the text before the call as content, the call as one tool_calls delta, finish_reason tool_calls', async () => {
    const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'caller',
      messages: [{ role: 'user', content: 'Weather?' }],
      tools: [WEATHER_TOOL],
      stream: true,
    });
    let content = '';
    const calls: Array<{ name?: string; arguments?: string }> = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      content += choice?.delta.content ?? '';
      for (const call of choice?.delta.tool_calls ?? []) calls.push(call.function ?? {});
      finish = choice?.finish_reason ?? finish;
    }
    expect(content).toBe('Let me look.\n');
    expect(calls).toEqual([{ name: 'get_weather', arguments: '{"city":"Paris"}' }]);
    expect(finish).toBe('tool_calls');
  });

  test('the AI SDK runs the tool loop: call, execute, result back, final text', async () => {
    const provider = createOpenAICompatible({ name: 'drmas', baseURL });
    const cities: string[] = [];
    const result = await generateText({
      model: provider('caller'),
      prompt: 'Weather in Paris?',
      tools: {
        get_weather: tool({
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => (cities.push(city), { temp: 21 }),
        }),
      },
      stopWhen: stepCountIs(3),
    });
    expect(cities).toEqual(['Paris']);
    expect(result.text).toBe('It is 21 degrees in Paris.');
  });

  test('tool_choice "required" is a 400 naming it (the engines cannot force a call)', async () => {
    const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });
    const required = await client.chat.completions
      .create({ model: 'caller', messages: [{ role: 'user', content: 'x' }], tools: [WEATHER_TOOL], tool_choice: 'required' })
      .catch((e: unknown) => e);
    expect(required).toMatchObject({ status: 400, param: 'tool_choice' });
  });

  test('parseToolCalls: calls with the text around them; malformed JSON or no name is plain text', () => {
    const parsed = parseToolCalls(`${CALL}\n<tool_call>\n{"name": "f", "arguments": "{}"}\n</tool_call>`)!;
    expect(parsed.content).toBe('Let me look.');
    expect(parsed.calls.map((c) => c.function)).toEqual([
      { name: 'get_weather', arguments: '{"city":"Paris"}' },
      { name: 'f', arguments: '{}' },
    ]);
    expect(parsed.calls[0]!.id).not.toBe(parsed.calls[1]!.id);
    expect(parseToolCalls('<tool_call>\n{"name": "f", "arguments": {</tool_call>')).toBeUndefined();
    expect(parseToolCalls('<tool_call>{"arguments": {}}</tool_call>')).toBeUndefined();
    expect(parseToolCalls('no call here')).toBeUndefined();
  });
});
