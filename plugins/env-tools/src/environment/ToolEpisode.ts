import { parseToolCallText, type EnvAction, type Episode, type ToolCallFormat } from '@drmas/core';
import { ToolSession, type ToolOutcome, type ToolRegistry } from '../registry/ToolRegistry.js';
import type { ToolTask } from '../tasks/ToolTask.js';
import { answerMatches, extractAnswer } from './answerCheck.js';

export interface ToolEpisodeOptions {
  format: ToolCallFormat;
  maxCallsPerTurn: number;
  formatReward: number;
  callPenalty: number;
}

/** Feedback for a turn with neither a call nor an answer. */
export const NO_CALL_FEEDBACK = 'error: write a <tool_call>{"name": ..., "arguments": {...}}</tool_call> or an <answer>...</answer>';

/**
 * One task: each turn either calls tools (their results are appended to the observation, which the agent reads next
 * turn) or answers (checked against the task's answer; the episode ends). Outcome: 1 for a right answer, plus
 * `formatReward` x the share of well-formed turns, minus `callPenalty` per call.
 */
export class ToolEpisode implements Episode {
  done = false;
  roundScore?: number;
  readonly session: ToolSession;
  private readonly transcript: string[] = [];
  private success = false;
  private turns = 0;
  private wellFormed = 0;
  private calls = 0;
  private errors = 0;

  constructor(
    readonly task: ToolTask,
    private readonly registry: ToolRegistry,
    private readonly options: ToolEpisodeOptions,
  ) {
    this.session = new ToolSession(task.files ?? {});
  }

  get outcome(): number {
    const format = this.turns > 0 ? this.wellFormed / this.turns : 0;
    return (this.success ? 1 : 0) + this.options.formatReward * format - this.options.callPenalty * this.calls;
  }

  observation(): string {
    return this.transcript.join('\n');
  }

  variables(): Record<string, string> {
    return { question: this.task.question, tools: this.registry.listing(), tool_names: this.registry.names.join(', ') };
  }

  /** `success`: answered right; `calls`, `tool_errors` (calls that got an error); `answered`; `format`: share of well-formed turns. */
  metrics(): Record<string, number> {
    return {
      success: this.success ? 1 : 0,
      calls: this.calls,
      tool_errors: this.errors,
      answered: this.done ? 1 : 0,
      format: this.turns > 0 ? this.wellFormed / this.turns : 0,
    };
  }

  judge(action: EnvAction): number {
    const answer = extractAnswer(action.content);
    return answer !== undefined && answerMatches(answer, this.task.answer) ? 1 : 0;
  }

  /** Runs the turn's calls (in order) or takes its answer. */
  async apply(action: EnvAction): Promise<void> {
    this.turns++;
    this.roundScore = 0;
    const text = action.content;
    const { blocks } = parseToolCallText(text, this.options.format);
    if (blocks.length > 0) {
      if (blocks.every((b) => b.ok)) this.wellFormed++;
      const outcomes: ToolOutcome[] = [];
      for (const [i, block] of blocks.entries()) {
        if (i >= this.options.maxCallsPerTurn) {
          outcomes.push({ ok: false, kind: 'failed', text: `error: at most ${this.options.maxCallsPerTurn} calls run per turn` });
          continue;
        }
        this.calls++;
        outcomes.push(await this.registry.call(block, this.session));
      }
      blocks.forEach((block, i) => {
        const outcome = outcomes[i]!;
        if (!outcome.ok) this.errors++;
        const written = block.ok ? JSON.stringify({ name: block.call.name, arguments: block.call.arguments }) : block.raw;
        this.transcript.push(`<tool_call>${written}</tool_call>`, `<tool_response>${outcome.text}</tool_response>`);
      });
      return;
    }
    const answer = extractAnswer(text);
    if (answer === undefined) {
      this.transcript.push(`<tool_response>${NO_CALL_FEEDBACK}</tool_response>`);
      return;
    }
    this.wellFormed++;
    this.success = answerMatches(answer, this.task.answer);
    this.roundScore = this.success ? 1 : 0;
    this.done = true;
  }
}
