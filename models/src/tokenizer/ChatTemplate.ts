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
      this.compiled.set(template, compiled);
    }
    try {
      return compiled.render({ ...variables, messages });
    } catch (err) {
      throw new TokenizerError(`the chat template failed to render: ${(err as Error).message}`);
    }
  }
}
