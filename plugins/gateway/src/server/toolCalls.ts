import { randomUUID } from 'node:crypto';
import type { ChatMessage } from '@drmas/core';

/** A tool call as OpenAI returns it: the arguments as a JSON string. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** Where a Hermes-style call begins (Qwen2.5, Qwen3, Hermes, ...): the text streamed to the client stops before it. */
export const TOOL_CALL_OPEN = '<tool_call>';
const TOOL_CALL = /<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/g;

/**
 * The calls in a completion written in the Hermes format the Qwen templates teach, one JSON object per block:
 * `<tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>`. Answers undefined when there is none that parses
 * (the text is then plain content, as vLLM's hermes parser leaves it); else the calls and the text around them.
 */
export function parseToolCalls(text: string): { content: string | null; calls: ToolCall[] } | undefined {
  const calls: ToolCall[] = [];
  for (const match of text.matchAll(TOOL_CALL)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(match[1]!);
    } catch {
      return undefined;
    }
    const { name, arguments: args } = (parsed ?? {}) as { name?: unknown; arguments?: unknown };
    if (typeof name !== 'string') return undefined;
    calls.push({
      id: `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
      type: 'function',
      function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) },
    });
  }
  if (calls.length === 0) return undefined;
  const content = text.replace(TOOL_CALL, '').trim();
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
