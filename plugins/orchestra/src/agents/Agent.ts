import type { ParsedOutput, TextCodec } from '@drmas/core';

export interface AgentSampling {
  /** 0 means greedy. */
  temperature: number;
  topP: number;
  /** 0 disables top-k. */
  topK: number;
  maxNewTokens: number;
}

/** Values substituted into a prompt template: `{observation}`, `{team_context}`, `{round}`, and the task's own. */
export type PromptVariables = Record<string, string>;

/**
 * One agent role as the orchestra runner uses it: a prompt from the row's variables, chat formatting for the
 * role's model, and a parser from the sampled text to an action. Malformed output is an invalid turn, never an
 * exception.
 */
export interface Agent {
  readonly role: string;
  readonly sampling: AgentSampling;
  /** Generation of a row stops once its text holds one of these (kept in the text). */
  readonly stop: readonly string[];
  /** Subtracted from an invalid turn's reward by the `drmas` allocator. */
  readonly invalidPenalty: number;
  prompt(variables: PromptVariables): string;
  /** The text to encode: the prompt as a fresh single-turn chat when the codec has a template, else the prompt. */
  format(prompt: string, codec: TextCodec): { text: string; templated: boolean };
  parse(text: string, finishReason?: 'stop' | 'length'): ParsedOutput;
}
