import { DrmasError, type EnvAction, type EnvTaskBatch, type Environment, type Episode } from '@drmas/core';
import { ArithmeticTaskSource } from '../ArithmeticTaskSource.js';
import { DatasetTaskSource } from '../DatasetTaskSource.js';
import { MathDatasetError, MathTaskSourceError } from '../errors.js';
import type { MathTask, MathTaskSource } from '../MathTask.js';
import { checkArithmeticClaims } from '../arithmeticClaims.js';
import { scoreMathResponse, type MathScore } from '../scoreMathResponse.js';
import { mathEnvSettings, type MathEnvSettings, type MathEnvSettingsInput } from './mathEnvConfig.js';

/**
 * One math problem: a single round that scores the submitted solution's last `\boxed{}`. With
 * `checkSteps`, a training problem's right answer counts only when no `a+b=c` claim of the solution is false.
 */
export class MathEpisode implements Episode {
  done = false;
  outcome = 0;
  roundScore?: number;
  score?: MathScore;
  private falseClaims = 0;

  constructor(
    readonly task: MathTask,
    private readonly checkSteps = false,
  ) {}

  observation(): string {
    return this.task.question;
  }

  variables(): Record<string, string> {
    return { question: this.task.question };
  }

  /** `false_step`: the solution has a false claim; `right_after_false_step`: and its answer is right anyway. */
  metrics(): Record<string, number> {
    const falseStep = this.falseClaims > 0 ? 1 : 0;
    return {
      answered: this.score?.extracted === undefined ? 0 : 1,
      false_step: falseStep,
      right_after_false_step: falseStep && this.score?.correct ? 1 : 0,
    };
  }

  judge(action: EnvAction): number {
    return action.type === 'answer' ? this.grade(action.content).outcome : 0;
  }

  submit(action: EnvAction): void {
    const graded = this.grade(action.type === 'answer' ? action.content : '');
    this.score = graded.score;
    this.falseClaims = graded.falseClaims;
    this.outcome = graded.outcome;
    this.roundScore = this.outcome;
    this.done = true;
  }

  private grade(content: string): { score: MathScore; falseClaims: number; outcome: number } {
    const score = scoreMathResponse(content, this.task.answer);
    const falseClaims = checkArithmeticClaims(content).false;
    const stepsHold = !this.checkSteps || this.task.split !== 'train' || falseClaims === 0;
    return { score, falseClaims, outcome: score.correct && stepsHold ? 1 : 0 };
  }
}

/**
 * Math problems from env-math: synthetic arithmetic (`env.levels`, `env.trainSize`, `env.testSize`) or a dataset
 * file (`env.file`, `env.testFile` or `env.testFraction`). Outcome: `scoreMathResponse` of the final answer.
 */
export class MathEnvironment implements Environment<MathTask> {
  readonly name = 'math';
  private readonly settingsOf: () => MathEnvSettingsInput;
  private source?: MathTaskSource;
  private settings?: MathEnvSettings;

  constructor(settings: MathEnvSettingsInput | (() => MathEnvSettingsInput) = {}) {
    this.settingsOf = typeof settings === 'function' ? settings : () => settings;
  }

  get maxRounds(): number {
    return this.settings?.maxRounds ?? 1;
  }

  async init(): Promise<void> {
    if (this.source) return;
    const s = mathEnvSettings.parse(this.settingsOf());
    this.settings = s;
    try {
      this.source = s.file
        ? await DatasetTaskSource.fromFiles({
            file: s.file,
            testFile: s.testFile,
            testFraction: s.testFraction,
            seed: s.seed,
            dataSource: s.dataSource,
          })
        : new ArithmeticTaskSource({ seed: s.seed, levels: s.levels, trainSize: s.trainSize, testSize: s.testSize });
    } catch (error) {
      if (error instanceof MathTaskSourceError) {
        throw new DrmasError('CONFIG_INVALID', `math environment: ${error.message}`, { key: `env.${error.option}`, cause: error });
      }
      if (error instanceof MathDatasetError) throw error.at(error.file === s.testFile ? 'env.testFile' : 'env.file', 'math environment');
      throw error;
    }
  }

  batch(cursor: number, count: number): EnvTaskBatch<MathTask> {
    return this.ready().batch(cursor, count);
  }

  test(): MathTask[] {
    return this.ready().test();
  }

  reset(task: MathTask): MathEpisode {
    return new MathEpisode(task, this.settings?.checkSteps ?? false);
  }

  async advance(episodes: Episode[], actions: EnvAction[]): Promise<void> {
    if (actions.length !== episodes.length) throw new Error(`step got ${actions.length} actions for ${episodes.length} episodes`);
    episodes.forEach((episode, i) => (episode as MathEpisode).submit(actions[i]!));
  }

  private ready(): MathTaskSource {
    if (!this.source) throw new Error('MathEnvironment used before init()');
    return this.source;
  }
}
