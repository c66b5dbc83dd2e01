import type { SplitMix32 } from '@drmas/core';
import type { GeneratedProblem } from './generateProblem.js';

const NAMES = ['Ana', 'Ben', 'Mia', 'Leo', 'Sam', 'Eva'] as const;
const ITEMS = ['apples', 'pens', 'books', 'cards', 'eggs', 'coins', 'marbles'] as const;

/**
 * Short word problems, one or two operations each. The partition key holds the template and the numbers but not
 * the name or item, so a held-out problem's arithmetic never appears in training under another name.
 */
const TEMPLATES: ReadonlyArray<(r: SplitMix32) => GeneratedProblem> = [
  (r) => {
    const item = r.pick(ITEMS);
    const a = r.range(10, 60);
    const b = r.range(1, a);
    const c = r.range(1, 30);
    const rest = a - b;
    return {
      question: `A shop has ${a} ${item}, sells ${b} and buys ${c} more. How many ${item} does it have?`,
      answer: `${rest + c}`,
      steps: [
        [`${a}-${b}`, `${rest}`],
        [`${rest}+${c}`, `${rest + c}`],
      ],
      key: `word0:${a}:${b}:${c}`,
    };
  },
  (r) => {
    const name = r.pick(NAMES);
    const item = r.pick(ITEMS);
    const a = r.range(1, 30);
    const b = r.range(2, 9);
    const c = r.range(2, 12);
    const got = b * c;
    return {
      question: `${name} has ${a} ${item} and gets ${b} bags with ${c} ${item} each. How many ${item} does ${name} have now?`,
      answer: `${a + got}`,
      steps: [
        [`${b}*${c}`, `${got}`],
        [`${a}+${got}`, `${a + got}`],
      ],
      key: `word1:${a}:${b}:${c}`,
    };
  },
  (r) => {
    const name = r.pick(NAMES);
    const item = r.pick(ITEMS);
    const b = r.range(2, 9);
    const each = r.range(2, 15);
    const a = b * each;
    return {
      question: `${name} shares ${a} ${item} equally among ${b} friends. How many ${item} does each friend get?`,
      answer: `${each}`,
      steps: [[`${a}/${b}`, `${each}`]],
      key: `word2:${a}:${b}`,
    };
  },
  (r) => {
    const name = r.pick(NAMES);
    const item = r.pick(ITEMS);
    const a = r.range(2, 12);
    const b = r.range(2, 9);
    const total = a * b;
    const c = r.range(1, total);
    return {
      question: `A box holds ${a} ${item}. ${name} buys ${b} boxes and gives ${c} away. How many ${item} are left?`,
      answer: `${total - c}`,
      steps: [
        [`${a}*${b}`, `${total}`],
        [`${total}-${c}`, `${total - c}`],
      ],
      key: `word3:${a}:${b}:${c}`,
    };
  },
];

export function generateWordProblem(random: SplitMix32): GeneratedProblem {
  return random.pick(TEMPLATES)(random);
}
