import type { SplitMix32, ToolTaskKind } from '@drmas/core';

const FILE_WORDS = ['notes', 'codes', 'ledger', 'keys', 'memo', 'inbox', 'log', 'plan'];

/** The calculator's tasks: arithmetic a small model cannot do in its head, `What is 48213 * 937?`. */
export const arithmeticTasks: ToolTaskKind = Object.freeze({
  kind: 'arithmetic',
  draw(random: SplitMix32) {
    const a = random.range(1000, 99_999);
    const b = random.range(100, 9_999);
    const op = random.pick(['*', '+', '-'] as const);
    const value = op === '*' ? BigInt(a) * BigInt(b) : op === '+' ? BigInt(a + b) : BigInt(a - b);
    const expression = `${a} ${op} ${b}`;
    return {
      key: `arithmetic/${expression}`,
      task: {
        dataSource: 'tools-arithmetic',
        question: `What is ${expression}?`,
        answer: value.toString(),
        solution: { name: 'calculator', arguments: { expression } },
      },
    };
  },
});

/** The filesystem's tasks: `What is in /notes/3.txt?`, the file made for the episode with a second one beside it. */
export const fileTasks: ToolTaskKind = Object.freeze({
  kind: 'file',
  draw(random: SplitMix32) {
    const word = random.pick(FILE_WORDS);
    const number = random.range(1, 9);
    const path = `/${word}/${number}.txt`;
    const code = String(random.range(10_000, 99_999));
    // A second file beside it, so reading any file is not enough.
    const other = `/${word}/${(number % 9) + 1}.txt`;
    const files = { [path]: code, [other]: String(random.range(10_000, 99_999)) };
    return {
      key: `file/${path}/${code}`,
      task: {
        dataSource: 'tools-file',
        question: `What is in ${path}?`,
        answer: code,
        files,
        solution: { name: 'fs', arguments: { op: 'read', path } },
      },
    };
  },
});
