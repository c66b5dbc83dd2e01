import { parseTaggedOutput } from '@drmas/core';

export type Verdict = { valid: true; winner: string } | { valid: false; reason: string };

/**
 * A judge model's verdict, parsed strictly by core's tag parser (the one that made the judge's turn valid or not in
 * the orchestra): outside a well-formed `<think>` block, exactly one `<verdict>NAME</verdict>` whose NAME (any case) is one of
 * the debaters. Anything else is invalid, with why.
 */
export function parseVerdict(text: string, debaters: readonly string[]): Verdict {
  const parsed = parseTaggedOutput(text, { tag: 'verdict', values: debaters.map((d) => d.toLowerCase()) });
  if (!parsed.valid || !parsed.action) return { valid: false, reason: parsed.reason ?? 'no verdict' };
  const winner = debaters.find((d) => d.toLowerCase() === parsed.action!.content)!;
  return { valid: true, winner };
}
