import { describe, expect, test } from '@jest/globals';
import { parseToolCallText, toolCallFormatOf } from '../src/index.js';

// Hand-written completions, each with the calls a reader of the format would see in it.
describe('parseToolCallText: hermes (the tag form, Qwen templates)', () => {
  test('one call with text before it', () => {
    const parsed = parseToolCallText('I will add.\n<tool_call>\n{"name": "calculator", "arguments": {"expression": "2+3"}}\n</tool_call>');
    expect(parsed.content).toBe('I will add.');
    expect(parsed.blocks).toEqual([
      {
        ok: true,
        call: { name: 'calculator', arguments: { expression: '2+3' } },
        raw: '{"name": "calculator", "arguments": {"expression": "2+3"}}',
      },
    ]);
  });

  test('several calls in one turn, in order', () => {
    const text =
      '<tool_call>{"name": "fs", "arguments": {"op": "read", "path": "/a"}}</tool_call> then ' +
      '<tool_call>{"name": "search", "arguments": {"query": "Paris"}}</tool_call>';
    const parsed = parseToolCallText(text);
    expect(parsed.blocks.map((b) => (b.ok ? b.call.name : b.error))).toEqual(['fs', 'search']);
    expect(parsed.content).toBe('then');
  });

  test('malformed JSON is a failed block that names the problem; the good call beside it still parses', () => {
    const parsed = parseToolCallText(
      '<tool_call>{"name": "calculator", "arguments": {"expression": "1+"</tool_call><tool_call>{"name": "x"}</tool_call>',
    );
    expect(parsed.blocks).toHaveLength(2);
    expect(parsed.blocks[0]!.ok).toBe(false);
    expect(!parsed.blocks[0]!.ok && parsed.blocks[0]!.error).toMatch(/not valid JSON/);
    expect(parsed.blocks[1]).toEqual({ ok: true, call: { name: 'x', arguments: {} }, raw: '{"name": "x"}' });
  });

  test('no name, a non-object, and an unclosed tag are failed blocks; plain text has none', () => {
    expect(parseToolCallText('<tool_call>{"arguments": {}}</tool_call>').blocks[0]).toMatchObject({
      ok: false,
      error: expect.stringMatching(/"name"/),
    });
    expect(parseToolCallText('<tool_call>[1, 2]</tool_call>').blocks[0]).toMatchObject({
      ok: false,
      error: expect.stringMatching(/JSON object/),
    });
    const cut = parseToolCallText('Let me <tool_call>{"name": "calc');
    expect(cut.blocks).toEqual([{ ok: false, error: '<tool_call> is not closed by </tool_call>', raw: '<tool_call>{"name": "calc' }]);
    expect(cut.content).toBe('Let me');
    expect(parseToolCallText('The answer is 5.')).toEqual({ blocks: [], content: 'The answer is 5.' });
  });

  test('arguments given as a JSON string (OpenAI style) are kept as written', () => {
    const parsed = parseToolCallText('<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>');
    expect(parsed.blocks[0]).toMatchObject({ ok: true, call: { name: 'f', arguments: '{"a": 1}' } });
  });
});

describe('parseToolCallText: the template forms', () => {
  test('llama3: the message is the call, with or without <|python_tag|>; several separated by ;', () => {
    expect(parseToolCallText('{"name": "calculator", "parameters": {"expression": "7*6"}}', 'llama3').blocks).toEqual([
      {
        ok: true,
        call: { name: 'calculator', arguments: { expression: '7*6' } },
        raw: '{"name": "calculator", "parameters": {"expression": "7*6"}}',
      },
    ]);
    const two = parseToolCallText(
      'Checking.<|python_tag|>{"name": "a", "parameters": {"q": "x;y"}}; {"name": "b", "parameters": {}}',
      'llama3',
    );
    expect(two.content).toBe('Checking.');
    expect(two.blocks.map((b) => b.ok && b.call)).toEqual([
      { name: 'a', arguments: { q: 'x;y' } },
      { name: 'b', arguments: {} },
    ]);
    expect(parseToolCallText('The set {1, 2} has two members.', 'llama3').blocks).toEqual([]);
  });

  test('mistral: [TOOL_CALLS] and a JSON list', () => {
    const parsed = parseToolCallText(
      '[TOOL_CALLS] [{"name": "search", "arguments": {"query": "Nile"}}, {"name": "calculator", "arguments": {"expression": "1/3"}}]',
      'mistral',
    );
    expect(parsed.blocks.map((b) => b.ok && b.call)).toEqual([
      { name: 'search', arguments: { query: 'Nile' } },
      { name: 'calculator', arguments: { expression: '1/3' } },
    ]);
    expect(parseToolCallText('[TOOL_CALLS] [{"name": ', 'mistral').blocks[0]).toMatchObject({ ok: false });
  });

  test('toolCallFormatOf reads the format a template teaches', () => {
    expect(toolCallFormatOf(undefined)).toBe('hermes');
    expect(toolCallFormatOf("{{- '<tool_call>\\n' + call | tojson }}")).toBe('hermes');
    expect(toolCallFormatOf('{{- \'{"name": "\' + t.name + \'", "parameters": \' }}{{- "<|python_tag|>" }}')).toBe('llama3');
    expect(toolCallFormatOf("{{- '[TOOL_CALLS] [' }}")).toBe('mistral');
    expect(toolCallFormatOf('{%- for m in messages %}{{ m.content }}{% endfor %}')).toBe('hermes');
  });
});
