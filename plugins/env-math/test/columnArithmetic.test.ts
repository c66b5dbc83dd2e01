import { columnWork, solverDemonstration, verifierDemonstration, type MathTask } from '../src/index.js';

describe('columnWork', () => {
  test.each([
    ['127+47', '174', '7+7=14, 2+4+1=7, 1; 127+47=174'],
    ['99+5', '104', '9+5=14, 9+1=10; 99+5=104'],
    ['80+47', '127', '0+7=7, 8+4=12; 80+47=127'],
    ['52-27', '25', '12-7=5, 5-1-2=2; 52-27=25'],
    ['100-5', '95', '10-5=5, 10-1=9, 1-1=0; 100-5=95'],
    ['53-1', '52', '3-1=2, 5; 53-1=52'],
  ])('%s by hand', (expression, value, expected) => {
    expect(columnWork(expression, value)).toBe(expected);
  });

  test.each([
    ['7+2', '9'],
    ['3*4', '12'],
    ['4+(-18)', '-14'],
    ['5-12', '-7'],
    ['1/2+1/3', '5/6'],
  ])('%s stays as it is', (expression, value) => {
    expect(columnWork(expression, value)).toBeUndefined();
  });

  /** Reads the answer back from the columns alone: each column's last digit from the units up, the last column whole. */
  function answerFromColumns(work: string): string {
    const results = work
      .split(';')[0]!
      .split(', ')
      .map((column) => column.split('=').at(-1)!);
    return (
      results.at(-1)! +
      results
        .slice(0, -1)
        .reverse()
        .map((r) => r.at(-1))
        .join('')
    ).replace(/^0+(?=\d)/, '');
  }

  test('every column is a true one-digit fact and the columns spell the answer (all operands below 200)', () => {
    for (let a = 0; a < 200; a++) {
      for (let b = 0; b < 200; b += 7) {
        for (const [op, value] of [
          ['+', a + b],
          ['-', a - b],
        ] as const) {
          if (value < 0 || (a < 10 && b < 10)) continue;
          const work = columnWork(`${a}${op}${b}`, String(value))!;
          for (const column of work
            .split(';')[0]!
            .split(', ')
            .filter((c) => c.includes('='))) {
            const [lhs = '', rhs] = column.split('=');
            const terms = lhs.split(/[+-]/).map(Number);
            const computed = op === '+' ? terms.reduce((x, y) => x + y, 0) : terms.slice(1).reduce((x, y) => x - y, terms[0]!);
            expect([lhs, computed]).toEqual([lhs, Number(rhs)]);
            expect(terms.slice(1).every((t) => t < 10)).toBe(true);
          }
          expect(answerFromColumns(work)).toBe(String(value));
        }
      }
    }
  });

  test('the columns style in demonstrations', () => {
    const task = {
      id: 'c',
      question: 'What is 8 * 10 + 47?',
      answer: '127',
      dataSource: 'synthetic-arithmetic',
      split: 'train',
      difficulty: 2,
      steps: [
        ['8*10', '80'],
        ['80+47', '127'],
      ],
    } as MathTask;
    expect(solverDemonstration(task, { method: 'columns' })).toBe('8*10=80. 0+7=7, 8+4=12; 80+47=127. \\boxed{127}');
    expect(verifierDemonstration(task, '137', { method: 'columns' })).toBe(
      '8*10=80. 0+7=7, 8+4=12; 80+47=127. 137 is wrong. <verify>reject</verify>',
    );
    expect(solverDemonstration(task)).toBe('8*10=80. 80+47=127. \\boxed{127}');
  });
});
