/**
 * Tool calls written in a completion, in the formats chat templates teach. One parser for every reader: the gateway
 * turns the calls into OpenAI `tool_calls`, the tool-use environment runs them.
 *
 * - `hermes` (Qwen2.5, Qwen3, Hermes; drmas's documented tag form): one JSON object per block,
 *   `<tool_call>{"name": "f", "arguments": {...}}</tool_call>`;
 * - `llama3` (Llama 3.1/3.2 JSON tool calling): the message is one object `{"name": "f", "parameters": {...}}`,
 *   maybe after `<|python_tag|>`;
 * - `mistral` (Mistral's v3 templates): `[TOOL_CALLS] [{"name": "f", "arguments": {...}}, ...]`.
 */
export type ToolCallFormat = 'hermes' | 'llama3' | 'mistral';

export const TOOL_CALL_FORMATS: readonly ToolCallFormat[] = ['hermes', 'llama3', 'mistral'];

/** Where a Hermes-style call begins: the gateway's stream holds text back from here. */
export const TOOL_CALL_OPEN = '<tool_call>';

export interface ParsedToolCall {
  name: string;
  /** As written: an object, or (OpenAI style) a JSON string of one. */
  arguments: unknown;
}

/** One call the completion wrote: parsed, or why not (malformed JSON, no name), with the text of the call. */
export type ToolCallBlock = { ok: true; call: ParsedToolCall; raw: string } | { ok: false; error: string; raw: string };

export interface ToolCallParse {
  /** Every call in the order written; empty when the text holds none. */
  blocks: ToolCallBlock[];
  /** The text outside the calls, trimmed. */
  content: string;
}

const HERMES_BLOCK = /<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/g;
const PYTHON_TAG = '<|python_tag|>';
const MISTRAL_CALLS = '[TOOL_CALLS]';

/** The format a chat template teaches, read from its text; `hermes` when it names none (the tag form). */
export function toolCallFormatOf(chatTemplate: string | undefined): ToolCallFormat {
  if (!chatTemplate) return 'hermes';
  if (chatTemplate.includes(MISTRAL_CALLS)) return 'mistral';
  if (chatTemplate.includes('<tool_call>')) return 'hermes';
  if (chatTemplate.includes(PYTHON_TAG) || /"parameters"\s*:/.test(chatTemplate)) return 'llama3';
  return 'hermes';
}

/** The calls in `text` written in `format`. Never throws: a call that does not parse is a block with its error. */
export function parseToolCallText(text: string, format: ToolCallFormat = 'hermes'): ToolCallParse {
  if (format === 'llama3') return parseLlama3(text);
  if (format === 'mistral') return parseMistral(text);
  return parseHermes(text);
}

function parseHermes(text: string): ToolCallParse {
  const blocks: ToolCallBlock[] = [];
  for (const match of text.matchAll(HERMES_BLOCK)) blocks.push(blockOf(match[1]!, 'arguments'));
  const unclosed = text.replace(HERMES_BLOCK, '').indexOf(TOOL_CALL_OPEN);
  let content = text.replace(HERMES_BLOCK, '');
  if (unclosed >= 0) {
    blocks.push({ ok: false, error: '<tool_call> is not closed by </tool_call>', raw: content.slice(unclosed) });
    content = content.slice(0, unclosed);
  }
  return { blocks, content: content.trim() };
}

function parseLlama3(text: string): ToolCallParse {
  const tagged = text.indexOf(PYTHON_TAG);
  const body = (tagged >= 0 ? text.slice(tagged + PYTHON_TAG.length) : text).trim();
  // Without the tag, only a message that is a JSON object is a call (prose that mentions braces is content).
  if (tagged < 0 && !(body.startsWith('{') && body.endsWith('}'))) return { blocks: [], content: text.trim() };
  // Llama 3.2 may write several calls separated by `;`.
  const pieces = splitTopLevel(body, ';');
  return { blocks: pieces.map((piece) => blockOf(piece, 'parameters')), content: tagged >= 0 ? text.slice(0, tagged).trim() : '' };
}

function parseMistral(text: string): ToolCallParse {
  const at = text.indexOf(MISTRAL_CALLS);
  if (at < 0) return { blocks: [], content: text.trim() };
  const raw = text.slice(at + MISTRAL_CALLS.length).trim();
  const content = text.slice(0, at).trim();
  const parsed = parseJson(raw);
  if ('error' in parsed) return { blocks: [{ ok: false, error: parsed.error, raw }], content };
  const list = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
  return { blocks: list.map((item) => callOf(item, JSON.stringify(item), 'arguments')), content };
}

function blockOf(raw: string, argumentsKey: 'arguments' | 'parameters'): ToolCallBlock {
  const parsed = parseJson(raw);
  return 'error' in parsed ? { ok: false, error: parsed.error, raw } : callOf(parsed.value, raw, argumentsKey);
}

function callOf(value: unknown, raw: string, argumentsKey: 'arguments' | 'parameters'): ToolCallBlock {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { ok: false, error: 'a tool call must be a JSON object {"name": ..., "arguments": {...}}', raw };
  const record = value as Record<string, unknown>;
  if (typeof record.name !== 'string' || record.name === '')
    return { ok: false, error: 'a tool call needs "name": the name of a tool, as a string', raw };
  // Templates differ in the key; accept either so a model trained on one still gets its call run.
  const args = record[argumentsKey] ?? record[argumentsKey === 'arguments' ? 'parameters' : 'arguments'];
  return { ok: true, call: { name: record.name, arguments: args ?? {} }, raw };
}

function parseJson(raw: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(raw) as unknown };
  } catch (error) {
    return { error: `the tool call is not valid JSON (${(error as Error).message})` };
  }
}

/** Splits at `separator` outside JSON strings, objects and arrays. */
function splitTopLevel(text: string, separator: string): string[] {
  const pieces: string[] = [];
  let depth = 0;
  let inString = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === separator && depth === 0) {
      pieces.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  pieces.push(text.slice(start).trim());
  return pieces.filter((piece) => piece !== '');
}
