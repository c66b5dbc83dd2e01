import { z } from '@drmas/core';

/**
 * The debate an orchestra submits as a `debate` action's content (JSON): the debaters in speaking order, each turn's
 * text with its round (from 1), and the judge model's output when there was one. The orchestra plugin's `debate`
 * orchestra writes it (`DebateTranscript` there); this schema is the environment's side of that wire format.
 */
export const debateTranscriptSchema = z.object({
  debaters: z.array(z.string().min(1)).min(1),
  turns: z.array(z.object({ agent: z.string().min(1), round: z.number().int().min(1), text: z.string() })),
  judge: z.string().optional(),
});

export type DebateTranscript = z.infer<typeof debateTranscriptSchema>;

/** The transcript in an action's content, or undefined when it is not one (then the debate is judged as empty). */
export function parseTranscript(content: string): DebateTranscript | undefined {
  try {
    const parsed = debateTranscriptSchema.safeParse(JSON.parse(content));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
