import { noTrainingTaskLeft, TaskPool, type EnvAction, type EnvTaskBatch, type Environment, type Episode } from '@drmas/core';
import { CodeSandboxes } from '../sandbox/CodeSandboxes.js';
import type { CodeSandbox, SandboxLimits } from '../sandbox/CodeSandbox.js';
import type { CodeTask } from '../tasks/CodeTask.js';
import { loadCodeDataset, splitCodeTasks } from '../tasks/loadCodeDataset.js';
import { syntheticCodeTasks } from '../tasks/syntheticCodeTasks.js';
import { verifyCode, type CodeVerdict } from '../verifyCode.js';
import { codeEnvSettings, type CodeEnvSettings, type CodeEnvSettingsInput } from './codeEnvConfig.js';

/** One task: a single step that runs the submitted code against the task's tests. */
export class CodeEpisode implements Episode {
  done = false;
  outcome = 0;
  roundScore?: number;
  verdict?: CodeVerdict;

  constructor(
    readonly task: CodeTask,
    private readonly reward: 'fraction' | 'all',
  ) {}

  observation(): string {
    return this.task.prompt;
  }

  variables(): Record<string, string> {
    return { question: this.task.prompt, starter_code: this.task.starterCode ?? '', language: this.task.language };
  }

  /** `tests_passed`: share of tests passed; `all_passed`; the run's status; `has_code`: the answer had code. */
  metrics(): Record<string, number> {
    const v = this.verdict;
    return {
      tests_passed: v && v.total > 0 ? v.passed / v.total : 0,
      all_passed: v?.allPassed ? 1 : 0,
      has_code: v && v.status !== 'no_code' ? 1 : 0,
      load_error: v?.status === 'error' ? 1 : 0,
      timeout: v?.status === 'timeout' ? 1 : 0,
      memory: v?.status === 'memory' ? 1 : 0,
    };
  }

  record(verdict: CodeVerdict): void {
    this.verdict = verdict;
    const fraction = verdict.total > 0 ? verdict.passed / verdict.total : 0;
    this.outcome = this.reward === 'all' ? (verdict.allPassed ? 1 : 0) : fraction;
    this.roundScore = this.outcome;
    this.done = true;
  }
}

/**
 * Programming tasks (env-code): synthetic one-line functions (`env.code.languages`, `trainSize`, `testSize`) or a
 * dataset (`env.code.file`), judged by running the answer's code with the task's tests in a sandbox (QuickJS for
 * JavaScript, Pyodide for Python). Outcome: the share of tests passed (`env.code.reward: all`: 1 only when all pass).
 */
export class CodeEnvironment implements Environment<CodeTask> {
  readonly name = 'code';
  private readonly settingsOf: () => CodeEnvSettingsInput;
  private source?: TaskPool<CodeTask>;
  private settings?: CodeEnvSettings;
  private sandboxes?: CodeSandboxes;

  constructor(settings: CodeEnvSettingsInput | (() => CodeEnvSettingsInput) = {}) {
    this.settingsOf = typeof settings === 'function' ? settings : () => settings;
  }

  get maxRounds(): number {
    return this.settings?.maxRounds ?? 1;
  }

  async init(): Promise<void> {
    if (this.source) return;
    const s = codeEnvSettings.parse(this.settingsOf());
    this.settings = s;
    const { code } = s;
    let split: { train: CodeTask[]; test: CodeTask[] };
    if (code.file) {
      const options = { language: code.language, dataSource: code.dataSource };
      const tasks = await loadCodeDataset(code.file, code.testFile ? { ...options, split: 'train' } : options);
      split = code.testFile
        ? { train: tasks, test: await loadCodeDataset(code.testFile, { ...options, split: 'test' }) }
        : splitCodeTasks(tasks, s.testFraction);
      if (code.testFile) {
        const held = new Set(split.test.map((t) => t.prompt.trim()));
        split.train = split.train.filter((t) => !held.has(t.prompt.trim()));
      }
      if (split.train.length === 0) throw noTrainingTaskLeft(code.file, 'env.code.file');
    } else {
      split = syntheticCodeTasks({ seed: s.seed, languages: code.languages, trainSize: code.trainSize, testSize: code.testSize });
    }
    this.source = new TaskPool(split.train, split.test, s.seed, 'code-train');
  }

  /** The sandboxes this environment runs answers in; an orchestra's verifier tool can share them (see `verify`). */
  get sandbox(): CodeSandbox {
    return (this.sandboxes ??= new CodeSandboxes());
  }

  get limits(): Partial<SandboxLimits> {
    const code = this.settings?.code;
    return code ? { timeoutMs: code.timeoutMs, memoryBytes: code.memoryMb * 1024 * 1024 } : {};
  }

  /** The verifier tool for reflective workflows: an answer's per-test results and feedback text, with this run's limits. */
  verify(task: CodeTask, answer: string): Promise<CodeVerdict> {
    return verifyCode(task, answer, this.sandbox, this.limits);
  }

  batch(cursor: number, count: number): EnvTaskBatch<CodeTask> {
    return this.ready().batch(cursor, count);
  }

  test(): CodeTask[] {
    return this.ready().test();
  }

  reset(task: CodeTask): CodeEpisode {
    return new CodeEpisode(task, this.settings?.code.reward ?? 'fraction');
  }

  async advance(episodes: Episode[], actions: EnvAction[]): Promise<void> {
    if (actions.length !== episodes.length) throw new Error(`step got ${actions.length} actions for ${episodes.length} episodes`);
    const verdicts = await Promise.all(
      episodes.map((episode, i) => {
        const action = actions[i]!;
        return this.verify((episode as CodeEpisode).task, action.type === 'answer' ? action.content : '');
      }),
    );
    episodes.forEach((episode, i) => (episode as CodeEpisode).record(verdicts[i]!));
  }

  /** Frees the sandboxes (the Pyodide worker). */
  async dispose(): Promise<void> {
    await this.sandboxes?.dispose();
    this.sandboxes = undefined;
  }

  private ready(): TaskPool<CodeTask> {
    if (!this.source) throw new Error('CodeEnvironment used before init()');
    return this.source;
  }
}
