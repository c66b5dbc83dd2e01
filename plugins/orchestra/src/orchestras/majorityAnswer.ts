/** The outcome of a vote over answers: the winning answer, who gave it first, and the count. */
export interface VoteResult {
  /** The majority answer as first written. */
  answer: string;
  /** Index (in the answers given) of its first occurrence. */
  first: number;
  votes: number;
  /** Valid answers counted (undefined entries abstain). */
  voters: number;
}

/**
 * The majority among `answers` (undefined: an abstention, e.g. an invalid output), answers grouped by `equal` (an
 * AnswerFormat's: with env-math's `math`, `4`, `4.0` and `\frac{8}{2}` are one answer). A tie goes to the tied answer
 * given first, so the result depends on call order and never on sampling noise elsewhere; undefined when nobody
 * answered.
 */
export function majorityAnswer(
  answers: ReadonlyArray<string | undefined>,
  equal: (answer: string, reference: string) => boolean,
): VoteResult | undefined {
  const groups: Array<{ answer: string; first: number; votes: number }> = [];
  let voters = 0;
  answers.forEach((answer, index) => {
    if (answer === undefined) return;
    voters++;
    const group = groups.find((g) => equal(answer, g.answer));
    if (group) group.votes++;
    else groups.push({ answer, first: index, votes: 1 });
  });
  // Groups are in order of first occurrence, so the first with the most votes is the earliest of the tied.
  let best: (typeof groups)[number] | undefined;
  for (const group of groups) if (!best || group.votes > best.votes) best = group;
  return best && { ...best, voters };
}
