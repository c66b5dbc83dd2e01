import { agent, parseToolCallText, type ParsedOutput, type Plugin } from '@drmas/core';
import { actionFrom, defineOrchestra, NO_ACTION, Orchestra, PromptedAgent, call } from '@drmas/plugin-orchestra';
import { extractAnswer } from '@drmas/plugin-env-tools';

/**
 * Short, since the tiny models read every prompt token on a CPU: the tools by name, the question, and the calls and
 * results so far (`{observation}`). `{tools}` (one line per tool with its arguments) suits larger models.
 */
export const ASSISTANT_PROMPT = 'Tools: {tool_names}\nQ: {question}\n{observation}';

/**
 * The Assistant: each turn either calls tools, `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, or
 * answers, `<answer>...</answer>`. Valid when every call parses as JSON with a name, or the answer tag holds text.
 */
export class AssistantAgent extends PromptedAgent {
  override parse(text: string, finishReason?: 'stop' | 'length'): ParsedOutput {
    const { blocks } = parseToolCallText(text);
    if (blocks.length > 0) {
      const bad = blocks.find((block) => !block.ok);
      return bad && !bad.ok ? { valid: false, reason: bad.error } : { valid: true, action: { tag: 'tool_call', content: text } };
    }
    const answer = extractAnswer(text);
    if (answer !== undefined) return { valid: true, action: { tag: 'answer', content: answer } };
    return { valid: false, reason: `neither a <tool_call> nor an <answer>${finishReason === 'length' ? ' (cut at maxNewTokens)' : ''}` };
  }
}
agent('assistant')(AssistantAgent);

/** One Assistant turn per round; the environment runs its calls or checks its answer. */
export const toolsOrchestra = defineOrchestra({
  name: 'tools',
  agents: {
    assistant: {
      prompt: ASSISTANT_PROMPT,
      tag: 'answer',
      stop: ['</tool_call>', '</answer>'],
      invalidPenalty: 0.1,
      sampling: { maxNewTokens: 80 },
    },
  },
  round: call('assistant'),
  action: (row) => actionFrom(row, 'assistant', 'answer', 'text') ?? NO_ACTION,
});

/** Registers the Assistant role and the `tools` orchestra. */
export const toolsOrchestraPlugin: Plugin = {
  name: 'tools-orchestra',
  register(ctx) {
    ctx.agents.register(AssistantAgent);
    ctx.provide(Orchestra, 'tools', toolsOrchestra);
  },
};
