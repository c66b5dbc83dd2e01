import {
  agentName,
  DrmasError,
  parseTaggedOutput,
  type ChatMessage,
  type OutputFormat,
  type ParsedOutput,
  type TextCodec,
} from '@drmas/core';
import type { Agent, AgentSampling, PromptVariables } from './Agent.js';
import { promptedAgentOptionsSchema } from './agentConfig.js';
import { renderPrompt } from './promptTemplate.js';

/**
 * An agent defined by configuration: a prompt template, an output format (one action tag) and sampling settings.
 * Subclass it with `@agent('role')` to give it a role name (the options may also carry `role`).
 */
export class PromptedAgent implements Agent {
  readonly role: string;
  readonly template: string;
  readonly system?: string;
  readonly outputFormat: OutputFormat;
  readonly sampling: AgentSampling;
  readonly stop: readonly string[];
  readonly invalidPenalty: number;

  constructor(options: Record<string, unknown>) {
    this.role = (typeof options.role === 'string' ? options.role : undefined) ?? agentName(new.target) ?? new.target.name;
    const parsed = promptedAgentOptionsSchema.safeParse(options);
    if (!parsed.success) {
      // A failed parse always has at least one issue.
      const issue = parsed.error.issues[0]!;
      const path = issue.path.join('.');
      throw new DrmasError('CONFIG_INVALID', `agent "${this.role}": ${path ? `${path}: ` : ''}${issue.message}`, {
        key: `agents.${this.role}${path ? `.${path}` : ''}`,
        hint: 'set it under agents.<role>, or give the role defaults in the orchestra',
      });
    }
    const o = parsed.data;
    this.template = o.prompt;
    this.system = o.system;
    this.outputFormat = { tag: o.tag, values: o.values, requireThink: o.requireThink };
    this.sampling = o.sampling;
    this.stop = o.stop;
    this.invalidPenalty = o.invalidPenalty;
  }

  prompt(variables: PromptVariables): string {
    return renderPrompt(this.template, variables);
  }

  format(prompt: string, codec: TextCodec): { text: string; templated: boolean } {
    if (!codec.chatTemplate || !codec.applyChatTemplate) return { text: prompt, templated: false };
    const messages: ChatMessage[] = this.system ? [{ role: 'system', content: this.system }] : [];
    messages.push({ role: 'user', content: prompt });
    return { text: codec.applyChatTemplate(messages, { addGenerationPrompt: true }), templated: true };
  }

  parse(text: string, finishReason?: 'stop' | 'length'): ParsedOutput {
    return parseTaggedOutput(text, this.outputFormat, finishReason);
  }
}
