import { z } from 'zod';

/**
 * How an environment asks a debating orchestra for the whole debate rather than its final answer: an episode whose
 * `variables()` has `submit: 'transcript'` gets a `debate` action whose content is a `DebateTranscript` as JSON, and
 * gives each agent's reward after the step as the metric `reward_<agent>` (metrics cross an environment server, where
 * an episode has no `judge`). The orchestra plugin's `debate` runner writes it; env-debate judges it. Any other
 * environment gets the team's final answer as an `answer` action.
 */
export const TRANSCRIPT_SUBMISSION = { variable: 'submit', value: 'transcript', actionType: 'debate', rewardMetric: 'reward_' } as const;

/**
 * The debate as handed to an environment that judges it (JSON, so it crosses an environment server): the debaters in
 * speaking order, every debater turn in order with its round (from 1), and the judge model's whole output when the
 * orchestra ran one.
 */
export const debateTranscriptSchema = z.object({
  debaters: z.array(z.string().min(1)).min(1),
  turns: z.array(z.object({ agent: z.string().min(1), round: z.number().int().min(1), text: z.string() })),
  judge: z.string().optional(),
});

export type DebateTranscript = z.infer<typeof debateTranscriptSchema>;

/** The transcript in an action's content, or undefined when it is not one. */
export function parseTranscript(content: string): DebateTranscript | undefined {
  try {
    const parsed = debateTranscriptSchema.safeParse(JSON.parse(content));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
