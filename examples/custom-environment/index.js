// @ts-check
/**
 * drmas-plugin-env-lists: an environment written as a third party would write one (plain ESM JavaScript, its own
 * package.json, no build step). A task is a short list of digits; the answer, in `\boxed{}`, is its largest digit
 * (`max`), the list sorted (`sort`) or reversed (`reverse`). It provides the `lists` Environment, so the built-in
 * `math` orchestra (a Solver answering in `\boxed{}`, a Verifier) runs it: `env: { name: 'lists' }`.
 */
import { DrmasError, Environment, envSection, extractBoxedAnswer, hashParts, SeededRng, z } from '@drmas/core';

const PLUGIN_NAME = 'env-lists';
const ENVIRONMENT_NAME = 'lists';

/** @typedef {'max' | 'sort' | 'reverse'} Operation */
/** @typedef {{ id: string; dataSource: string; question: string; answer: string; split: 'train' | 'test' }} ListTask */
/** @typedef {import('@drmas/core').EnvAction} EnvAction */
/** @typedef {import('@drmas/core').Episode} Episode */
/** @typedef {import('@drmas/core').Environment<ListTask>} ListEnvironment */

/** @type {Record<Operation, { question(digits: number[]): string; answer(digits: number[]): number[] }>} */
const OPERATIONS = {
  max: { question: (d) => `What is the largest of ${d.join(', ')}?`, answer: (d) => [Math.max(...d)] },
  sort: { question: (d) => `Sort ${d.join(', ')} from smallest to largest.`, answer: (d) => [...d].sort((a, b) => a - b) },
  reverse: { question: (d) => `Reverse ${d.join(', ')}.`, answer: (d) => [...d].reverse() },
};

/**
 * The keys this plugin adds to `env`. Core owns `name`, `seed`, `maxRounds` and `testFraction`, and two plugins may
 * not declare one key, so this environment's own keys sit under one key named after it.
 */
export const listsKeys = z.object({
  lists: z
    .strictObject({
      operation: z.enum(['max', 'sort', 'reverse']).default('max'),
      /** Digits (1-9) per list. */
      length: z.number().int().min(2).max(5).default(3),
      /** Held-out tasks; `env.testFraction` (default 0.1) is the share of lists that are held out. */
      testSize: z.number().int().min(1).default(32),
    })
    .prefault({}),
});
const listsSettings = envSection.extend(listsKeys.shape);

/** @param {string} text the digits of `text`, in order, joined by spaces */
const digitsOf = (text) => (text.match(/\d+/g) ?? []).join(' ');

/** 1 when `action` answers `task` in its last `\boxed{}` (digits compared in order, separators ignored), else 0. */
function grade(/** @type {ListTask} */ task, /** @type {EnvAction} */ action) {
  if (action.type !== 'answer') return 0;
  const boxed = extractBoxedAnswer(action.content);
  return boxed !== undefined && digitsOf(boxed) === digitsOf(task.answer) ? 1 : 0;
}

/** One list: a single step that scores the submitted answer. @implements {Episode} */
class ListsEpisode {
  /** @param {ListTask} task */
  constructor(task) {
    this.task = task;
    this.done = false;
    this.outcome = 0;
    /** @type {number | undefined} */
    this.roundScore = undefined;
    this.answered = 0;
  }

  observation() {
    return this.task.question;
  }
  variables() {
    return { question: this.task.question };
  }
  metrics() {
    return { answered: this.answered };
  }
  /** @param {EnvAction} action */
  judge(action) {
    return grade(this.task, action);
  }

  /** @param {EnvAction} action */
  submit(action) {
    this.answered = action.type === 'answer' && extractBoxedAnswer(action.content) !== undefined ? 1 : 0;
    this.outcome = grade(this.task, action);
    this.roundScore = this.outcome;
    this.done = true;
  }
}

/**
 * Training task `i` is drawn from its own generator, forked from `env.seed` by `i`, so a cursor resumes the stream
 * exactly. A list is held out when a hash of its digits in sorted order falls under `env.testFraction`, whatever
 * the seed: training never shows a held-out list nor a reordering of one.
 * @implements {ListEnvironment}
 */
export class ListsEnvironment {
  /** @param {z.input<typeof listsSettings> | (() => z.input<typeof listsSettings>)} settings */
  constructor(settings = {}) {
    this.name = ENVIRONMENT_NAME;
    this.settingsOf = typeof settings === 'function' ? settings : () => settings;
    /** @type {z.output<typeof listsSettings> | undefined} */
    this.settings = undefined;
    /** @type {ListTask[]} */
    this.heldOut = [];
  }

  get maxRounds() {
    return this.settings?.maxRounds ?? 1;
  }

  async init() {
    if (this.settings) return;
    const settings = listsSettings.parse(this.settingsOf());
    const { length, testSize } = settings.lists;
    const all = Array.from({ length: 9 ** length }, (_, n) => Array.from({ length }, (__, i) => 1 + (Math.floor(n / 9 ** i) % 9)));
    const heldOut = all.filter((digits) => this.isHeldOut(digits, settings.testFraction));
    if (heldOut.length < testSize) {
      throw new DrmasError(
        'CONFIG_INVALID',
        `lists environment: ${heldOut.length} lists of ${length} digits are held out, fewer than env.lists.testSize (${testSize})`,
        {
          key: 'env.lists.testSize',
          hint: 'lower env.lists.testSize, or raise env.testFraction or env.lists.length',
        },
      );
    }
    this.settings = settings;
    this.heldOut = new SeededRng(settings.seed)
      .fork('test')
      .shuffle(heldOut)
      .slice(0, testSize)
      .map((digits, i) => this.task(digits, `test-${i}`, 'test'));
  }

  /** @param {number} cursor @param {number} count */
  batch(cursor, count) {
    const { seed, lists, testFraction } = this.ready();
    const root = new SeededRng(seed);
    const tasks = Array.from({ length: count }, (_, k) => {
      const rng = root.fork(`train/${cursor + k}`);
      let digits;
      do digits = Array.from({ length: lists.length }, () => 1 + rng.int(9));
      while (this.isHeldOut(digits, testFraction));
      return this.task(digits, `train-${cursor + k}`, 'train');
    });
    return { tasks, nextCursor: cursor + count };
  }

  test() {
    this.ready();
    return this.heldOut;
  }

  /** @param {ListTask} task */
  reset(task) {
    return new ListsEpisode(task);
  }

  /** @param {Episode[]} episodes @param {EnvAction[]} actions one per episode */
  async advance(episodes, actions) {
    episodes.forEach((episode, i) => {
      const action = actions[i];
      if (action === undefined) throw new Error(`${ENVIRONMENT_NAME}: no action for episode ${i}`);
      /** @type {ListsEpisode} */ (episode).submit(action);
    });
  }

  /** @param {number[]} digits @param {number | undefined} testFraction */
  isHeldOut(digits, testFraction = 0.1) {
    return hashParts(ENVIRONMENT_NAME, [...digits].sort().join('')) / 2 ** 32 < testFraction;
  }

  /** @param {number[]} digits @param {string} id @param {'train' | 'test'} split @returns {ListTask} */
  task(digits, id, split) {
    const { operation } = this.ready().lists;
    const op = OPERATIONS[operation];
    return {
      id: `${operation}-${id}`,
      dataSource: `lists-${operation}`,
      question: op.question(digits),
      answer: op.answer(digits).join(', '),
      split,
    };
  }

  ready() {
    if (!this.settings) throw new Error('ListsEnvironment used before init()');
    return this.settings;
  }
}

/** @returns {import('@drmas/core').Plugin} */
export default function envListsPlugin() {
  return {
    name: PLUGIN_NAME,
    configSchema: { env: listsKeys },
    register(ctx) {
      const env = () => /** @type {z.input<typeof listsSettings>} */ (ctx.config.env);
      ctx.provide(Environment, ENVIRONMENT_NAME, new ListsEnvironment(env));
    },
  };
}
