import { exactMatch } from '@drmas/core';

const NUMBER = /^[-+]?\d[\d,]*(\.\d+)?$/;

/** A number written without grouping commas, sign `+` or trailing decimal zeros: `1,200.50` -> `1200.5`. */
function canonicalNumber(text: string): string {
  let t = text.replace(/,/g, '').replace(/^\+/, '');
  if (t.includes('.')) t = t.replace(/0+$/, '').replace(/\.$/, '');
  t = t.replace(/^(-?)0+(?=\d)/, '$1');
  return t === '-0' ? '0' : t;
}

/** The text of the last `<answer>...</answer>` in a turn, or undefined when it has none. */
export function extractAnswer(text: string): string | undefined {
  const matches = [...text.matchAll(/<answer>([\s\S]*?)<\/answer>/gi)];
  const last = matches.at(-1)?.[1]?.trim();
  return last === undefined || last === '' ? undefined : last;
}

/** Numbers are compared as numbers (exactly, as written in decimal); other answers by SQuAD's exact match. */
export function answerMatches(prediction: string, gold: string): boolean {
  const p = prediction.trim().replace(/\.$/, '');
  const g = gold.trim();
  if (NUMBER.test(g)) return NUMBER.test(p) && canonicalNumber(p) === canonicalNumber(g);
  return exactMatch(p, [g]) === 1;
}
