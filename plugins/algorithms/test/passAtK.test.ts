import { describe, expect, test } from '@jest/globals';
import { evaluateSamples, passAtK } from '../src/index.js';

describe('pass@k and avg@k', () => {
  test('pass@k, hand-worked', () => {
    // n = k: any success
    expect(passAtK(4, 0, 4)).toBe(0);
    expect(passAtK(4, 1, 4)).toBe(1);
    // n = 5, c = 2, k = 2: 1 - C(3,2)/C(5,2) = 1 - 3/10 = 0.7
    expect(passAtK(5, 2, 2)).toBeCloseTo(0.7, 12);
    // n = 10, c = 3, k = 1: c/n = 0.3
    expect(passAtK(10, 3, 1)).toBeCloseTo(0.3, 12);
    // n = 16, c = 1, k = 4: 1 - C(15,4)/C(16,4) = 1 - 1365/1820 = 0.25
    expect(passAtK(16, 1, 4)).toBeCloseTo(0.25, 12);
    expect(() => passAtK(3, 1, 4)).toThrow('1 <= k <= n');
  });

  test('avg@k and pass@k overall and per data source, hand-worked', () => {
    const tasks = [
      { dataSource: 'a', outcomes: [1, 0, 0, 0] }, // avg 0.25, pass 1
      { dataSource: 'a', outcomes: [0, 0, 0, 0] }, // avg 0,    pass 0
      { dataSource: 'b', outcomes: [1, 1, 1, 0] }, // avg 0.75, pass 1
    ];
    const { overall, bySource } = evaluateSamples(tasks, 4);
    expect(overall.avg).toBeCloseTo((0.25 + 0 + 0.75) / 3, 12);
    expect(overall.pass).toBeCloseTo(2 / 3, 12);
    expect(bySource).toEqual({ a: { tasks: 2, avg: 0.125, pass: 0.5 }, b: { tasks: 1, avg: 0.75, pass: 1 } });
  });

  test('partial credit counts in avg@k; success needs the threshold', () => {
    const { overall } = evaluateSamples([{ outcomes: [0.5, 0.5] }], 2);
    expect(overall).toEqual({ tasks: 1, avg: 0.5, pass: 0 });
    expect(evaluateSamples([{ outcomes: [0.5, 0.5] }], 2, { threshold: 0.5 }).overall.pass).toBe(1);
  });
});
