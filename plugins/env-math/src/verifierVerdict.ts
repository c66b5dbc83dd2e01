export type VerifierVerdict = 'approve' | 'reject';

export const VERIFY_APPROVE = '<verify>approve</verify>';
export const VERIFY_REJECT = '<verify>reject</verify>';

/** The verdict of the last `<verify>...</verify>` tag in a Verifier response, or undefined when there is none. */
export function extractVerifierVerdict(text: string): VerifierVerdict | undefined {
  if (typeof text !== 'string') return undefined;
  let verdict: VerifierVerdict | undefined;
  for (const m of text.matchAll(/<verify>\s*(approve|reject)\s*<\/verify>/gi)) verdict = m[1]!.toLowerCase() as VerifierVerdict;
  return verdict;
}
