/** Chat templates (Jinja, as in tokenizer_config.json) rendered with @huggingface/jinja. */
import { Template } from '@huggingface/jinja';
import { TokenizerError } from './errors.js';

/** ChatML, as used by Qwen: `<|im_start|>role\ncontent<|im_end|>\n` per message, then the generation prompt. */
export const DEFAULT_CHAT_TEMPLATE =
  "{%- for message in messages %}{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{%- endfor %}" +
  "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

export interface ChatMessage {
  role: string;
  content: string;
  [field: string]: unknown;
}

export interface ChatTemplateOptions {
  /** Append the opening of an assistant turn. */
  addGenerationPrompt?: boolean;
  /** Tool (function) schemas, passed to the template as `tools`. */
  tools?: unknown[];
  /** A template to use instead of the tokenizer's own. */
  chatTemplate?: string;
  /** Other variables for the template (e.g. `enable_thinking`). */
  [variable: string]: unknown;
}

export type ChatTemplateSetting = string | { name: string; template: string }[] | undefined;

/** Picks the template like transformers: a named list holds "default" and maybe "tool_use" (chosen with tools). */
export function selectChatTemplate(setting: ChatTemplateSetting, withTools: boolean): string | undefined {
  if (setting === undefined || typeof setting === 'string') return setting;
  const byName = new Map(setting.map((t) => [t.name, t.template]));
  return (withTools ? byName.get('tool_use') : undefined) ?? byName.get('default');
}

/** The characters Python's `str.isspace()` holds, which `str.strip()` removes (JavaScript's `trim` also removes U+FEFF and keeps \x1c-\x1f and \x85). */
const PYTHON_SPACE = new Set(
  '\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000',
);

type StripSide = 'strip' | 'lstrip' | 'rstrip';

/** Python's `str.strip([chars])`, `lstrip`, `rstrip`: `chars` (every one of its characters) or whitespace off the ends. */
export function pythonStrip(text: string, chars: string | undefined | null, side: StripSide): string {
  const strip = chars == null ? PYTHON_SPACE : new Set(chars);
  const characters = [...text];
  let start = 0;
  let end = characters.length;
  if (side !== 'rstrip') while (start < end && strip.has(characters[start]!)) start++;
  if (side !== 'lstrip') while (end > start && strip.has(characters[end - 1]!)) end--;
  return characters.slice(start, end).join('');
}

/** The functions templates' `.strip()`, `.lstrip()`, `.rstrip()` and `| trim` are rewritten to call. */
const PYTHON_STRIP_FUNCTIONS: Record<string, (text: unknown, chars?: unknown) => unknown> = Object.fromEntries(
  (['strip', 'lstrip', 'rstrip'] as const).map((side) => [
    `__drmas_python_${side}`,
    (text: unknown, chars?: unknown) =>
      typeof text === 'string' ? pythonStrip(text, typeof chars === 'string' ? chars : undefined, side) : text,
  ]),
);

type Node = { type?: unknown; [field: string]: unknown };

function isNode(value: unknown): value is Node {
  return value !== null && typeof value === 'object';
}

/**
 * Makes a parsed template strip as Python does. @huggingface/jinja (0.5.11) runs `s.strip('\n')`, `lstrip(chars)` and
 * `rstrip(chars)` as JavaScript's `trim`, ignoring `chars`, so Qwen3's template (`content.split('</think>')[-1]
 * .lstrip('\n')`) dropped the spaces and tabs that start an answer, which transformers keeps. Each such call, and each
 * `| trim` filter (Jinja's `str.strip`), becomes a call of the matching `PYTHON_STRIP_FUNCTIONS`.
 */
function pythonStrings(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) pythonStrings(item);
    return;
  }
  if (!isNode(node)) return;
  for (const value of Object.values(node)) pythonStrings(value);
  if (node.type === 'CallExpression' && isNode(node.callee) && node.callee.type === 'MemberExpression' && !node.callee.computed) {
    const { object, property } = node.callee;
    if (isNode(property) && property.type === 'Identifier' && ['strip', 'lstrip', 'rstrip'].includes(String(property.value))) {
      node.callee = { type: 'Identifier', value: `__drmas_python_${String(property.value)}` };
      const args: unknown[] = Array.isArray(node.args) ? node.args : [];
      node.args = [object, ...args];
    }
  }
  if (node.type === 'FilterExpression' && isNode(node.filter) && node.filter.type === 'Identifier' && node.filter.value === 'trim') {
    const operand = node.operand;
    for (const key of Object.keys(node)) delete node[key];
    Object.assign(node, { type: 'CallExpression', callee: { type: 'Identifier', value: '__drmas_python_strip' }, args: [operand] });
  }
}

export class ChatTemplateRenderer {
  private readonly compiled = new Map<string, Template>();

  render(template: string, messages: readonly ChatMessage[], variables: Record<string, unknown>): string {
    let compiled = this.compiled.get(template);
    if (compiled === undefined) {
      try {
        compiled = new Template(template);
      } catch (err) {
        throw new TokenizerError(`the chat template does not parse: ${(err as Error).message}`);
      }
      pythonStrings(compiled.parsed);
      this.compiled.set(template, compiled);
    }
    try {
      return compiled.render({ ...variables, ...PYTHON_STRIP_FUNCTIONS, messages });
    } catch (err) {
      throw new TokenizerError(`the chat template failed to render: ${(err as Error).message}`);
    }
  }
}
