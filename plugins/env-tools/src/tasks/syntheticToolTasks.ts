import { DrmasError, hashParts, SplitMix32 } from '@drmas/core';
import { generateKnowledgeBase, KB_SINGLE_HOP, type SearchQuestion } from '@drmas/plugin-env-search';
import type { ToolTask } from './ToolTask.js';

/** The kinds of synthetic task, each needing one tool: arithmetic a small model cannot do in its head, lookups, files. */
export const TOOL_TASK_KINDS = ['arithmetic', 'lookup', 'file'] as const;
export type ToolTaskKind = (typeof TOOL_TASK_KINDS)[number];

/** Share of all tasks (by their content, whatever the seed) held out: a held-out task is never trained on. */
export const TOOLS_HELD_OUT_SHARE = 0.15;
const MAX_REDRAWS = 10_000;
const FILE_WORDS = ['notes', 'codes', 'ledger', 'keys', 'memo', 'inbox', 'log', 'plan'];

export interface SyntheticToolOptions {
  seed: number;
  kinds: readonly ToolTaskKind[];
  trainSize: number;
  testSize: number;
  /** Entities of env-search's knowledge base (the lookups' questions and the search tool's documents). */
  entities: number;
}

export function isHeldOutTask(key: string): boolean {
  return hashParts('drmas/env-tools/held-out', key) / 4294967296 < TOOLS_HELD_OUT_SHARE;
}

interface Drawn {
  key: string;
  task: Omit<ToolTask, 'id'>;
}

function arithmetic(random: SplitMix32): Drawn {
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
}

function file(random: SplitMix32): Drawn {
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
}

function lookup(random: SplitMix32, questions: readonly SearchQuestion[]): Drawn {
  const question = random.pick(questions);
  const query = question.steps?.[0]?.query ?? question.question;
  return {
    key: `lookup/${question.question}`,
    task: {
      dataSource: 'tools-lookup',
      question: question.question,
      answer: question.answers[0]!,
      solution: { name: 'search', arguments: { query } },
    },
  };
}

/**
 * Deterministic tasks that need a tool: `What is 48213 * 937?` (calculator), `What is in /notes/3.txt?` (fs, the
 * file made for the episode), and env-search's single-hop knowledge-base questions (search). Task `index` of a split
 * is a pure function of (seed, split, index); the held-out list has `testSize` distinct tasks, none in training.
 */
export function syntheticToolTasks(options: SyntheticToolOptions): { train: ToolTask[]; test: ToolTask[] } {
  const { seed, kinds, trainSize, testSize } = options;
  const questions = kinds.includes('lookup')
    ? generateKnowledgeBase({ seed, entities: options.entities }).questions.filter((q) => q.dataSource === KB_SINGLE_HOP)
    : [];
  const draw = (split: string, index: number, attempt: number): Drawn => {
    const random = new SplitMix32(hashParts('synthetic-tools', seed, split, index, attempt));
    const kind = random.pick(kinds);
    return kind === 'arithmetic' ? arithmetic(random) : kind === 'file' ? file(random) : lookup(random, questions);
  };
  const train: ToolTask[] = [];
  for (let index = 0; index < trainSize; index++) {
    for (let attempt = 0; attempt < MAX_REDRAWS; attempt++) {
      const drawn = draw('train', index, attempt);
      if (isHeldOutTask(drawn.key)) continue;
      train.push({ id: `tools-${seed}-train-${index}`, ...drawn.task });
      break;
    }
  }
  const test: ToolTask[] = [];
  const seen = new Set<string>();
  const maxDraws = 1000 + 50 * testSize;
  for (let k = 0; test.length < testSize; k++) {
    if (k >= maxDraws)
      throw new DrmasError('LIMIT_EXCEEDED', `only ${test.length} distinct held-out tool tasks exist for env.tools.testSize ${testSize}`, {
        key: 'env.tools.testSize',
        hint: `lower env.tools.testSize to ${test.length} or less, or add a kind to env.tools.kinds`,
      });
    const drawn = draw('test', k, 0);
    if (!isHeldOutTask(drawn.key) || seen.has(drawn.key)) continue;
    seen.add(drawn.key);
    test.push({ id: `tools-${seed}-test-${test.length}`, ...drawn.task });
  }
  return { train, test };
}
