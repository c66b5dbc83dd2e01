/**
 * Text the built-in tokenizers are trained on: the kinds of strings drmas' example tasks produce (math word
 * problems with step-by-step arithmetic, search questions and answers, chat/tool markup).
 */
const SNIPPETS = [
  'Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. How many clips did Natalia sell altogether in April and May?',
  'Natalia sold 48 / 2 = 24 clips in May. Natalia sold 48 + 24 = 72 clips altogether in April and May. The answer is 72.',
  'Weng earns $12 an hour for babysitting. Yesterday, she just did 50 minutes of babysitting. How much did she earn?',
  'Weng earns 12 / 60 = $0.2 per minute. Working 50 minutes, she earned 0.2 x 50 = $10. The answer is 10.',
  'Betty is saving money for a new wallet which costs $100. Betty has only half of the money she needs.',
  'James writes a 3-page letter to 2 different friends twice a week. How many pages does he write a year?',
  'He writes each friend 3 * 2 = 6 pages a week. So he writes 6 * 2 = 12 pages every week. That means he writes 12 * 52 = 624 pages a year.',
  'Let x be the number of apples. Then 3x + 5 = 20, so 3x = 15 and x = 5.',
  'The total cost is the price per item times the number of items, plus tax.',
  'First, find the number of students in each class. Then add them together.',
  'A train travels 60 miles per hour for 3 hours. How far does it travel? 60 * 3 = 180 miles.',
  'What is the capital of France? The capital of France is Paris.',
  'Who wrote the novel Pride and Prejudice? Jane Austen wrote Pride and Prejudice in 1813.',
  'When was the Eiffel Tower completed? It was completed in 1889 for the World Fair.',
  'Which river is the longest in the world? The Nile is usually considered the longest river.',
  'I need to search for more information before answering the question.',
  '<search> population of Tokyo 2020 </search> <information> Tokyo had about 14 million residents in 2020. </information>',
  '<think> The question asks for the year, so I should look it up. </think> <answer> 1969 </answer>',
  'Question: How many legs do 3 spiders have? Answer: Each spider has 8 legs, so 3 * 8 = 24 legs.',
  'Solve the problem step by step and put the final answer after ####.',
  'The sum of two numbers is 25 and their difference is 7. The numbers are 16 and 9.',
  'She bought 4 notebooks at $2.50 each and 3 pens at $1.20 each, spending 10 + 3.60 = $13.60.',
  'If a rectangle is 8 cm long and 5 cm wide, its area is 8 * 5 = 40 square centimeters.',
  'The answer is the number of hours multiplied by the rate, which gives the total distance.',
  'You are a helpful assistant. Think step by step, then answer the question.',
  'The user asked a question. The assistant searched the web, read the results and answered.',
];

/** Deterministic arithmetic lines (`17 + 25 = 42`, ...), so digits and operators get merges. */
function arithmeticLines(count: number): string[] {
  const lines: string[] = [];
  let state = 12345;
  const next = (n: number) => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return (state >>> 8) % n;
  };
  const ops: [string, (a: number, b: number) => number][] = [
    ['+', (a, b) => a + b],
    ['-', (a, b) => a - b],
    ['*', (a, b) => a * b],
  ];
  for (let i = 0; i < count; i++) {
    const a = next(100);
    const b = next(50);
    const [symbol, f] = ops[next(ops.length)]!;
    lines.push(`${a} ${symbol} ${b} = ${f(a, b)}`);
  }
  return lines;
}

export function builtinCorpus(): string[] {
  return [...SNIPPETS, ...SNIPPETS.map((s) => s.toLowerCase()), ...arithmeticLines(400)];
}
