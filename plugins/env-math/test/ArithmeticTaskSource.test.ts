import { ArithmeticTaskSource, MathTaskSourceError, type ArithmeticTask, type MathTask } from '../src/index.js';
import { arithmeticValue } from '../../../test/support/arithmetic.js';

/** Exact value of `a/b op c/d` (the level-4 question), by plain integer arithmetic, as a reduced `n/d` or `n`. */
function fractionAnswer(question: string): string {
  const m = /^What is (\d+)\/(\d+) ([-+*]) (\d+)\/(\d+)\?$/.exec(question);
  if (!m) throw new Error(`not a fraction question: ${question}`);
  const a = Number(m[1]);
  const b = Number(m[2]);
  const c = Number(m[4]);
  const d = Number(m[5]);
  let num = m[3] === '*' ? a * c : m[3] === '+' ? a * d + c * b : a * d - c * b;
  let den = b * d;
  const g = (x: number, y: number): number => (y === 0 ? Math.abs(x) : g(y, x % y));
  const k = g(num, den);
  num /= k;
  den /= k;
  return den === 1 ? `${num}` : `${num}/${den}`;
}

/** The word problems' answers, read back from their text. */
function wordAnswer(question: string): string {
  let m = /^A shop has (\d+) \w+, sells (\d+) and buys (\d+) more\./.exec(question);
  if (m) return `${Number(m[1]) - Number(m[2]) + Number(m[3])}`;
  m = /^\w+ has (\d+) \w+ and gets (\d+) bags with (\d+) \w+ each\./.exec(question);
  if (m) return `${Number(m[1]) + Number(m[2]) * Number(m[3])}`;
  m = /^\w+ shares (\d+) \w+ equally among (\d+) friends\./.exec(question);
  if (m) return `${Number(m[1]) / Number(m[2])}`;
  m = /^A box holds (\d+) \w+\. \w+ buys (\d+) boxes and gives (\d+) away\./.exec(question);
  if (m) return `${Number(m[1]) * Number(m[2]) - Number(m[3])}`;
  throw new Error(`unknown word problem: ${question}`);
}

function independentAnswer(task: ArithmeticTask): string {
  if (task.difficulty <= 3) {
    const m = /^What is ([-+*() 0-9]+)\?$/.exec(task.question);
    if (!m) throw new Error(`not an arithmetic question: ${task.question}`);
    return String(arithmeticValue(m[1]!));
  }
  return task.difficulty === 4 ? fractionAnswer(task.question) : wordAnswer(task.question);
}

const ALL_LEVELS = [1, 2, 3, 4, 5];

describe('ArithmeticTaskSource', () => {
  test('answers are right, recomputed independently from the question, at every level', () => {
    const source = new ArithmeticTaskSource({ seed: 7, levels: ALL_LEVELS, testSize: 200 });
    const tasks = [...Array.from({ length: 2000 }, (_, i) => source.train(i)), ...source.test()];
    const seenLevels = new Set<number>();
    const mismatches: string[] = [];
    for (const task of tasks) {
      seenLevels.add(task.difficulty);
      const expected = independentAnswer(task);
      if (expected !== task.answer || task.steps.at(-1)?.at(-1) !== task.answer || !/^-?\d+(\/\d+)?$/.test(task.answer))
        mismatches.push(`${task.question} -> ${task.answer} (expected ${expected})`);
    }
    expect(mismatches).toEqual([]);
    expect([...seenLevels].sort()).toEqual(ALL_LEVELS);
    expect(tasks.some((t) => t.difficulty === 3 && t.answer.startsWith('-'))).toBe(true);
    expect(tasks.some((t) => t.difficulty === 4 && t.answer.includes('/'))).toBe(true);
  });

  test('the same (seed, split, index) gives the same task, whatever was drawn before', () => {
    const a = new ArithmeticTaskSource({ seed: 3, levels: ALL_LEVELS, testSize: 50 });
    const b = new ArithmeticTaskSource({ seed: 3, levels: ALL_LEVELS, testSize: 50 });
    const late = b.train(500);
    for (let i = 0; i < 100; i++) b.train(i);
    expect(a.train(500)).toEqual(late);
    expect(Array.from({ length: 100 }, (_, i) => a.train(i))).toEqual(Array.from({ length: 100 }, (_, i) => b.train(i)));
    expect(a.test()).toEqual(b.test());
  });

  test('different seeds give different tasks', () => {
    const questions = (seed: number) =>
      Array.from({ length: 50 }, (_, i) => new ArithmeticTaskSource({ seed, levels: ALL_LEVELS, testSize: 20 }).train(i).question);
    expect(questions(1)).not.toEqual(questions(2));
    const tests = (seed: number) => new ArithmeticTaskSource({ seed, levels: ALL_LEVELS, testSize: 20 }).test().map((t) => t.question);
    expect(tests(1)).not.toEqual(tests(2));
  });

  test('held-out questions never appear in 5000 train draws, even with operands swapped', () => {
    for (const levels of [ALL_LEVELS, [1]]) {
      const source = new ArithmeticTaskSource({ seed: 11, levels, testSize: 300 });
      const test = source.test();
      expect(test).toHaveLength(300);
      const testQuestions = new Set(test.map((t) => t.question));
      expect(testQuestions.size).toBe(300);
      const leaked: string[] = [];
      for (let i = 0; i < 5000; i++) {
        const { question } = source.train(i);
        const sum = /^What is (\d+) \+ (\d+)\?$/.exec(question);
        const swapped = sum ? `What is ${sum[2]} + ${sum[1]}?` : question;
        if (testQuestions.has(question) || testQuestions.has(swapped)) leaked.push(question);
      }
      expect(leaked).toEqual([]);
      expect(test.every((t) => t.split === 'test')).toBe(true);
    }
  });

  test('batches resume exactly from a cursor, for a stream and for a finite pool across epochs', () => {
    for (const trainSize of [undefined, 7]) {
      const source = new ArithmeticTaskSource({ seed: 5, levels: ALL_LEVELS, trainSize, testSize: 10 });
      const first = source.batch(0, 10);
      expect(first.nextCursor).toBe(10);
      const second = new ArithmeticTaskSource({ seed: 5, levels: ALL_LEVELS, trainSize, testSize: 10 }).batch(first.nextCursor, 10);
      expect([...first.tasks, ...second.tasks]).toEqual(source.batch(0, 20).tasks);
    }
  });

  test('a finite pool visits every task once per epoch, reshuffled by epoch', () => {
    const source = new ArithmeticTaskSource({ seed: 9, levels: ALL_LEVELS, trainSize: 50, testSize: 10 });
    const ids = (tasks: MathTask[]) => tasks.map((t) => t.id);
    const pool = ids(Array.from({ length: 50 }, (_, i) => source.train(i))).sort();
    const epoch0 = ids(source.batch(0, 50).tasks);
    const epoch1 = ids(source.batch(50, 50).tasks);
    expect([...epoch0].sort()).toEqual(pool);
    expect([...epoch1].sort()).toEqual(pool);
    expect(epoch1).not.toEqual(epoch0);
    expect(() => source.train(50)).toThrow(MathTaskSourceError);
  });

  test('invalid options are rejected with the option named', () => {
    expect(() => new ArithmeticTaskSource({ seed: 1, levels: [6], testSize: 1 })).toThrow(/unknown level 6/);
    expect(() => new ArithmeticTaskSource({ seed: 1, levels: [], testSize: 1 })).toThrow(MathTaskSourceError);
    expect(() => new ArithmeticTaskSource({ seed: 1, levels: [1], trainSize: 0, testSize: 1 })).toThrow(/trainSize/);
    const source = new ArithmeticTaskSource({ seed: 1, levels: [1], testSize: 5 });
    expect(() => source.batch(-1, 2)).toThrow(/cursor/);
    expect(() => new ArithmeticTaskSource({ seed: 1, levels: [4], testSize: 500 }).test()).toThrow(/lower testSize/);
  });
});
