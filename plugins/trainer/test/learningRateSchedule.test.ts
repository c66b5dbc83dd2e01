import { describe, expect, test } from '@jest/globals';
import { LearningRateSchedule } from '../src/index.js';

// Hand-worked against transformers' get_{constant,linear,cosine}_schedule_with_warmup (lr_lambda at each step).
describe('learning-rate schedules', () => {
  test('linear warm-up from 0 over warmupSteps, then constant', () => {
    const schedule = new LearningRateSchedule('constant', 4, 10);
    expect([0, 1, 2, 3, 4, 9].map((s) => schedule.scaleAt(s))).toEqual([0, 0.25, 0.5, 0.75, 1, 1]);
  });

  test('linear decay to 0 at the last step: (total - step) / (total - warmup)', () => {
    const schedule = new LearningRateSchedule('linear', 2, 10);
    expect([0, 1, 2, 6, 10].map((s) => schedule.scaleAt(s))).toEqual([0, 0.5, 1, 0.5, 0]);
  });

  test('cosine: 0.5 (1 + cos(pi progress)) after the warm-up', () => {
    const schedule = new LearningRateSchedule('cosine', 0, 10);
    expect(schedule.scaleAt(0)).toBe(1);
    expect(schedule.scaleAt(5)).toBeCloseTo(0.5, 12);
    expect(schedule.scaleAt(2)).toBeCloseTo(0.5 * (1 + Math.cos(Math.PI / 5)), 12);
    expect(schedule.scaleAt(10)).toBeCloseTo(0, 12);
    expect(new LearningRateSchedule('cosine', 2, 10).scaleAt(6)).toBeCloseTo(0.5, 12);
  });
});
