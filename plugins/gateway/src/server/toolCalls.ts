import { randomUUID } from 'node:crypto';
import { parseToolCallText, TOOL_CALL_OPEN, type ChatMessage } from '@drmas/core';

/** A tool call as OpenAI returns it: the arguments as a JSON string. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export { TOOL_CALL_OPEN };

/**
 * The calls in a completion written in the Hermes format the Qwen templates teach (parsed by `@drmas/core`, which
 * the tool-use environment shares): `<tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>`. Answers undefined
 * when there is none, or one that does not parse (the text is then plain content, as vLLM's hermes parser leaves it);
 * else the calls and the text around them.
 */
export function parseToolCalls(text: string): { content: string | null; calls: ToolCall[] } | undefined {
  const { blocks, content } = parseToolCallText(text, 'hermes');
  if (blocks.length === 0) return undefined;
  const calls: ToolCall[] = [];
  for (const block of blocks) {
    if (!block.ok) return undefined;
    const args = block.call.arguments;
    calls.push({
      id: `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
      type: 'function',
      function: { name: block.call.name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) },
    });
  }
  return { content: content === '' ? null : content, calls };
}

/**
 * Messages as Hugging Face chat templates read them: an assistant's earlier tool calls with their `arguments` as
 * objects (OpenAI sends JSON strings; templates write them with `tojson`), as transformers and vLLM pass them.
 */
export function templateMessages(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((message) => {
    const calls = message.tool_calls;
    if (!Array.isArray(calls)) return message;
    return {
      ...message,
      tool_calls: calls.map((call: { function?: { arguments?: unknown } }) => {
        const args = call.function?.arguments;
        if (typeof args !== 'string') return call;
        try {
          return { ...call, function: { ...call.function, arguments: JSON.parse(args) as unknown } };
        } catch {
          return call;
        }
      }),
    };
  });
}
