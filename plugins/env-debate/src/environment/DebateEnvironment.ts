import {
  AnswerFormat,
  noTrainingTaskLeft,
  parseTranscript,
  QuestionSet,
  TaskPool,
  TRANSCRIPT_SUBMISSION,
  type DebateTranscript,
  type EnvAction,
  type EnvTaskBatch,
  type Environment,
  type Episode,
  type Contributions,
} from '@drmas/core';
import { parseVerdict } from '../judge/parseVerdict.js';
import { judgeByRules, type AgentJudgement, type JudgeWeights } from '../judge/ruleJudge.js';
import type { DebateTask } from '../tasks/DebateTask.js';
import { debateTasks } from '../tasks/debateQuestions.js';
import { loadDebateDataset, splitDebateTasks } from '../tasks/loadDebateDataset.js';
import { debateEnvSettings, type DebateEnvSettings, type DebateEnvSettingsInput } from './debateEnvConfig.js';

/** A judged debate: who won, each agent's reward and the episode's outcome. */
export interface DebateJudgement {
  rules: AgentJudgement[];
  /** The judge model's winner, or the rule judge's (several on a tie); empty when a judge model gave no valid verdict. */
  winners: string[];
  /** Whether a judge model decided (its output was in the transcript), and its verdict's validity. */
  verdict?: { valid: boolean; winner?: string; reason?: string };
  rewards: Map<string, number>;
  outcome: number;
}

/** How a debate is judged: each debater's reward, the rule judge's weights, and how answers are read and compared. */
export interface DebateJudging {
  reward: 'win' | 'score';
  weights: JudgeWeights;
  answers: AnswerFormat;
}

/**
 * Judges a transcript: the judge model's verdict when the transcript has one (parsed strictly; invalid: no winner),
 * else the rule judge's top scores. Rewards: the winner 1 and the others 0 (`win`; k tied winners 1/k each), or each
 * debater its rule score (`score`, rule judge only). The judge model gets 1 when its winner ends on the reference
 * answer (verifiable tasks) or is one of the rule judge's winners (others), else 0. Outcome: verifiable, 1 when every
 * winner ends on the reference answer; otherwise the winners' rule score; 0 without a winner.
 */
export function judgeDebate(transcript: DebateTranscript, reference: string | undefined, options: DebateJudging): DebateJudgement {
  const { agents: rules, winners: ruleWinners } = judgeByRules(transcript, reference, options.answers, options.weights);
  const byAgent = new Map(rules.map((judgement) => [judgement.agent, judgement]));
  let winners = ruleWinners;
  let verdict: DebateJudgement['verdict'];
  if (transcript.judge !== undefined) {
    const parsed = parseVerdict(transcript.judge, transcript.debaters);
    verdict = parsed.valid ? { valid: true, winner: parsed.winner } : { valid: false, reason: parsed.reason };
    winners = parsed.valid ? [parsed.winner] : [];
  }
  const rewards = new Map<string, number>();
  for (const judgement of rules) {
    const won = winners.includes(judgement.agent);
    rewards.set(judgement.agent, options.reward === 'score' && !verdict ? judgement.score : won ? 1 / winners.length : 0);
  }
  const right = (agent: string) => reference !== undefined && byAgent.get(agent)?.correctness === 1;
  if (verdict)
    rewards.set(
      'judge',
      verdict.valid ? (reference !== undefined ? (right(verdict.winner!) ? 1 : 0) : ruleWinners.includes(verdict.winner!) ? 1 : 0) : 0,
    );
  const outcome =
    winners.length === 0
      ? 0
      : reference !== undefined
        ? winners.every(right)
          ? 1
          : 0
        : Math.max(...winners.map((w) => byAgent.get(w)!.score));
  return { rules, winners, verdict, rewards, outcome };
}

/** One debate: a single round that judges the submitted transcript. */
export class DebateEpisode implements Episode {
  done = false;
  outcome = 0;
  roundScore?: number;
  judgement?: DebateJudgement;

  constructor(
    readonly task: DebateTask,
    private readonly options: DebateJudging,
  ) {}

  observation(): string {
    return this.task.question;
  }

  /** `submit: transcript` asks the `debate` orchestra for the whole debate (`TRANSCRIPT_SUBMISSION`). */
  variables(): Record<string, string> {
    return { question: this.task.question, [TRANSCRIPT_SUBMISSION.variable]: TRANSCRIPT_SUBMISSION.value };
  }

  /**
   * `correct`: the outcome on verifiable tasks; `tie`; `verdict_valid` (judge model); the rule judge's mean marks; and
   * `reward_<agent>`, each agent's reward, which the `debate` orchestra gives its turns (`TRANSCRIPT_SUBMISSION`):
   * metrics cross an environment server, where the episode's `judge` does not.
   */
  metrics(): Record<string, number> {
    const j = this.judgement;
    const mean = (pick: (a: AgentJudgement) => number) =>
      j && j.rules.length ? j.rules.reduce((s, a) => s + pick(a), 0) / j.rules.length : 0;
    return {
      ...(this.task.answer !== undefined ? { correct: this.outcome } : {}),
      tie: j && j.winners.length > 1 ? 1 : 0,
      ...(j?.verdict ? { verdict_valid: j.verdict.valid ? 1 : 0 } : {}),
      structure: mean((a) => a.structure),
      evidence: mean((a) => a.evidence),
      consistency: mean((a) => a.consistency),
      ...Object.fromEntries([...(j?.rewards ?? [])].map(([agent, reward]) => [`${TRANSCRIPT_SUBMISSION.rewardMetric}${agent}`, reward])),
    };
  }

  /**
   * A `debate` action with `agentId`: that agent's reward in the judged debate (how the orchestra gives each turn its
   * agent's score); an `answer`: 1 when the answer it gives (by the answer format) is the reference. Anything else: 0.
   */
  judge(action: EnvAction): number {
    if (action.type === TRANSCRIPT_SUBMISSION.actionType) {
      const transcript = parseTranscript(action.content);
      return transcript && action.agentId ? (judgeDebate(transcript, this.task.answer, this.options).rewards.get(action.agentId) ?? 0) : 0;
    }
    if (action.type === 'answer') {
      const answer = this.options.answers.extract(action.content);
      return this.task.answer !== undefined && answer !== undefined && this.options.answers.equal(answer, this.task.answer) ? 1 : 0;
    }
    return 0;
  }

  submit(action: EnvAction): void {
    const transcript = action.type === TRANSCRIPT_SUBMISSION.actionType ? parseTranscript(action.content) : undefined;
    if (transcript) {
      this.judgement = judgeDebate(transcript, this.task.answer, this.options);
      this.outcome = this.judgement.outcome;
    } else {
      // A single answer (another orchestra): judged on correctness alone.
      this.outcome = this.judge(action);
    }
    this.roundScore = this.outcome;
    this.done = true;
  }
}

/** Where a debate environment finds the contributions its settings name: a kernel, or anything with `getNamed`. */
export type NamedContributions = Pick<Contributions, 'getNamed'>;

/**
 * Debates (env-debate): the questions of a QuestionSet (`env.debate.tasks`: env-math's `math`, `motions`), or a
 * dataset (`env.debate.file`), each judged from the transcript the `debate` orchestra submits: by rules, or by a judge
 * model's verdict; answers read and compared by an AnswerFormat (`env.debate.answerFormat`). Both are looked up in
 * `contributions` at `init` (the plugin hands it the kernel).
 */
export class DebateEnvironment implements Environment<DebateTask> {
  readonly name = 'debate';
  private readonly settingsOf: () => DebateEnvSettingsInput;
  private source?: TaskPool<DebateTask>;
  private settings?: DebateEnvSettings;
  private answers?: AnswerFormat;

  constructor(
    settings: DebateEnvSettingsInput | (() => DebateEnvSettingsInput) = {},
    private contributions?: NamedContributions,
  ) {
    this.settingsOf = typeof settings === 'function' ? settings : () => settings;
  }

  /** Where `env.debate.tasks` and `env.debate.answerFormat` are looked up (in a kernel: every plugin's contributions). */
  lookUpIn(contributions: NamedContributions): void {
    this.contributions = contributions;
  }

  get maxRounds(): number {
    return this.settings?.maxRounds ?? 1;
  }

  async init(): Promise<void> {
    if (this.source) return;
    const s = debateEnvSettings.parse(this.settingsOf());
    const { debate } = s;
    const contributions = this.lookup();
    this.answers = contributions.getNamed(AnswerFormat, debate.answerFormat, 'env.debate.answerFormat');
    let split: { train: DebateTask[]; test: DebateTask[] };
    if (debate.file) {
      const tasks = await loadDebateDataset(debate.file, debate.dataSource);
      split = debate.testFile
        ? {
            train: tasks.map((t) => ({ ...t, split: 'train' })),
            test: (await loadDebateDataset(debate.testFile, debate.dataSource)).map((t) => ({ ...t, split: 'test' })),
          }
        : splitDebateTasks(tasks, s.testFraction);
      const held = new Set(split.test.map((t) => t.question));
      split.train = split.train.filter((t) => !held.has(t.question));
      if (split.train.length === 0) throw noTrainingTaskLeft(debate.file, 'env.debate.file');
    } else {
      const questions = contributions.getNamed(QuestionSet, debate.tasks, 'env.debate.tasks');
      split = debateTasks(questions, debate.tasks, {
        seed: s.seed,
        levels: debate.levels,
        trainSize: debate.trainSize,
        testSize: debate.testSize,
      });
    }
    this.source = new TaskPool(split.train, split.test, s.seed, 'debate-train');
    this.settings = s;
  }

  batch(cursor: number, count: number): EnvTaskBatch<DebateTask> {
    return this.ready().source.batch(cursor, count);
  }

  test(): DebateTask[] {
    return this.ready().source.test();
  }

  reset(task: DebateTask): DebateEpisode {
    const { settings, answers } = this.ready();
    return new DebateEpisode(task, { reward: settings.debate.reward, weights: settings.debate.weights, answers });
  }

  async advance(episodes: Episode[], actions: EnvAction[]): Promise<void> {
    if (actions.length !== episodes.length) throw new Error(`step got ${actions.length} actions for ${episodes.length} episodes`);
    episodes.forEach((episode, i) => (episode as DebateEpisode).submit(actions[i]!));
  }

  private ready(): { source: TaskPool<DebateTask>; settings: DebateEnvSettings; answers: AnswerFormat } {
    if (!this.source || !this.settings || !this.answers) throw new Error('DebateEnvironment used before init()');
    return { source: this.source, settings: this.settings, answers: this.answers };
  }

  private lookup(): NamedContributions {
    if (!this.contributions)
      throw new Error('DebateEnvironment has nowhere to look up env.debate.tasks and env.debate.answerFormat: pass it a kernel');
    return this.contributions;
  }
}
