import { describe, expect, test } from '@jest/globals';
import { createKernel, type GenerateRequest, type Trajectory, type UserConfig } from '@drmas/core';
import envMathPlugin, { MathEnvironment, mathAnswerFormat, type MathTask } from '@drmas/plugin-env-math';
import envSearchPlugin from '@drmas/plugin-env-search';
import orchestraPlugin from '../src/index.js';
import {
  createDebateOrchestra,
  createMajorityVoteOrchestra,
  createSummaryOrchestra,
  debateTranscript,
  drmasAllocator,
  majorityAnswer,
  perTurnAllocator,
  type Orchestra,
} from '../src/index.js';
import { scriptedRunner, type Scripts } from './fixtures.js';

const WRONG = '-999';

/** Two arithmetic tasks with their answers (the environment grades against them). */
async function mathTasks() {
  const environment = new MathEnvironment({ seed: 3, levels: [1], testSize: 4 });
  await environment.init();
  return { environment, tasks: environment.batch(0, 2).tasks };
}

/** A script answering by call: `plan[i]` is the i-th generate call's answer, `right` for the task's own answer. */
function byCall(tasks: MathTask[], plan: string[]): Scripts[string] {
  const calls = new Map<GenerateRequest, number>();
  return (prompt, request) => {
    if (!calls.has(request)) calls.set(request, calls.size);
    const answer = plan[calls.get(request)!]!;
    const task = tasks.find((t) => prompt.includes(t.question))!;
    return answer === 'invalid' ? 'no answer here' : `\\boxed{${answer === 'right' ? task.answer : answer}}`;
  };
}

async function run(orchestra: Orchestra, scripts: (tasks: MathTask[]) => Scripts, settings: Record<string, unknown>) {
  const { environment, tasks } = await mathTasks();
  const { runner, backends } = scriptedRunner(orchestra, environment, scripts(tasks), settings);
  const result = await runner.run({ tasks: tasks.slice(0, 1), samplesPerTask: 2, seed: 1, idPrefix: 't' });
  return { ...result, backends };
}

const turnScores = (t: Trajectory) => t.turns.map((turn) => turn.info?.turnScore);
const rewards = (trajectories: Trajectory[], allocator: typeof drmasAllocator) =>
  allocator
    .allocate({ trajectories: structuredClone(trajectories), metrics: {} }, { invalidPenalty: () => 0.1 })
    .trajectories.map((t) => t.turns.map((turn) => turn.reward));

/** env-math's answer format, which `orchestra.answerFormat` names by default. */
const mathAnswers = () => mathAnswerFormat;
const sameAsMath = (answer: string, reference: string) => mathAnswerFormat.equal(answer, reference);

describe('majorityAnswer', () => {
  test("answers equal by the format's equality are one answer; invalid outputs abstain", () => {
    expect(majorityAnswer(['4', '5', '4.0', undefined, '\\frac{8}{2}'], sameAsMath)).toEqual({
      answer: '4',
      first: 0,
      votes: 3,
      voters: 4,
    });
    // Compared as strings, 5 and 4 tie at one vote each and the first given wins.
    expect(majorityAnswer(['4', '5', '4.0', undefined, '\\frac{8}{2}'], (a, b) => a === b)).toEqual({
      answer: '4',
      first: 0,
      votes: 1,
      voters: 4,
    });
  });
  test('a tie goes to the tied answer given first', () => {
    expect(majorityAnswer(['5', '4'], sameAsMath)?.answer).toBe('5');
    expect(majorityAnswer(['4', '5', '5', '4'], sameAsMath)).toEqual({ answer: '4', first: 0, votes: 2, voters: 4 });
    expect(majorityAnswer(['7', '5', '4', '4', '5'], sameAsMath)?.answer).toBe('5');
  });
  test('nobody answered: no majority', () => {
    expect(majorityAnswer([undefined, undefined], sameAsMath)).toBeUndefined();
    expect(majorityAnswer([], sameAsMath)).toBeUndefined();
  });
});

describe('majority_vote orchestra', () => {
  test('K solvers sampled independently; the majority answer is the team answer; rewards by allocator', async () => {
    const r = await run(createMajorityVoteOrchestra(mathAnswers), (tasks) => ({ solver: byCall(tasks, ['right', WRONG, 'right']) }), {
      solvers: 3,
    });
    // One batched call per solver (K = 3), each prompt the question alone.
    expect(r.backends.solver!.batchSizes).toEqual([2, 2, 2]);
    for (const t of r.trajectories) {
      expect(t.turns.map((turn) => turn.promptText)).toEqual(Array(3).fill(t.turns[0]!.promptText));
      expect(t.outcome).toBe(1);
      expect(turnScores(t)).toEqual([1, 0, 1]);
    }
    // drmas: the team outcome on every solver; per_turn: each solver its own answer.
    expect(rewards(r.trajectories, drmasAllocator)).toEqual([
      [1, 1, 1],
      [1, 1, 1],
    ]);
    expect(rewards(r.trajectories, perTurnAllocator)).toEqual([
      [1, 0, 1],
      [1, 0, 1],
    ]);
  });

  test('a 1-1 tie (one invalid abstains) goes to the first answer: wrong first, team wrong', async () => {
    const r = await run(createMajorityVoteOrchestra(mathAnswers), (tasks) => ({ solver: byCall(tasks, [WRONG, 'invalid', 'right']) }), {
      solvers: 3,
    });
    for (const t of r.trajectories) expect(t.outcome).toBe(0);
    // drmas: outcome 0 less the invalid solver's penalty; per_turn: own answers (the right one still earns 1).
    expect(rewards(r.trajectories, drmasAllocator)[0]).toEqual([0, -0.1, 0]);
    expect(rewards(r.trajectories, perTurnAllocator)[0]).toEqual([0, -0.1, 1]);
  });

  test("the team's answer is the whole text of the first solver that gave it, so env-math's checkSteps grades its steps", async () => {
    const environment = new MathEnvironment({ seed: 3, levels: [1], testSize: 4, checkSteps: true });
    await environment.init();
    const tasks = environment.batch(0, 1).tasks;
    const falseStep = (prompt: string) => `1+1=3. \\boxed{${tasks.find((t) => prompt.includes(t.question))!.answer}}`;
    const { runner } = scriptedRunner(createMajorityVoteOrchestra(mathAnswers), environment, { solver: falseStep }, { solvers: 3 });
    const run = await runner.run({ tasks, samplesPerTask: 1, seed: 1, idPrefix: 't' });
    // The right answer after a false claim: 0 on a training problem (each solver's own score too).
    expect(run.trajectories[0]!.outcome).toBe(0);
    expect(turnScores(run.trajectories[0]!)).toEqual([0, 0, 0]);
  });

  test('no valid answer: an invalid action, outcome 0', async () => {
    const r = await run(createMajorityVoteOrchestra(mathAnswers), (tasks) => ({ solver: byCall(tasks, ['invalid', 'invalid']) }), {
      solvers: 2,
    });
    expect(r.trajectories.map((t) => t.outcome)).toEqual([0, 0]);
  });
});

describe('summary orchestra', () => {
  test('K solvers, then a summarizer that sees their solutions; its answer is the team answer', async () => {
    const r = await run(
      createSummaryOrchestra(),
      (tasks) => ({ solver: byCall(tasks, ['right', WRONG, WRONG]), summarizer: byCall(tasks, ['right']) }),
      { solvers: 3 },
    );
    for (const t of r.trajectories) {
      expect(t.turns.map((turn) => turn.agentId)).toEqual(['solver', 'solver', 'solver', 'summarizer']);
      expect(t.turns[3]!.promptText).toContain(`The output of "solver": \\boxed{${WRONG}}`);
      expect(t.outcome).toBe(1);
    }
    expect(rewards(r.trajectories, perTurnAllocator)[0]).toEqual([1, 0, 0, 1]);
    expect(rewards(r.trajectories, drmasAllocator)[0]).toEqual([1, 1, 1, 1]);
  });
});

describe('debate orchestra on math', () => {
  test('debaters speak in turn for M rounds seeing the debate; the majority of last answers decides', async () => {
    const r = await run(
      createDebateOrchestra({ answers: mathAnswers }),
      (tasks) => ({ pro: byCall(tasks, ['right', 'right']), con: byCall(tasks, [WRONG, 'right']) }),
      { rounds: 2 },
    );
    for (const t of r.trajectories) {
      expect(t.turns.map((turn) => turn.agentId)).toEqual(['pro', 'con', 'pro', 'con']);
      // CON's first turn sees PRO's; PRO's second sees both.
      expect(t.turns[1]!.promptText).toContain('The output of "pro"');
      expect(t.turns[2]!.promptText).toContain(`The output of "con": \\boxed{${WRONG}}`);
      expect(t.outcome).toBe(1);
      expect(turnScores(t)).toEqual([1, 0, 1, 1]);
    }
    expect(r.backends.pro!.batchSizes).toEqual([2, 2]);
  });

  test('two debaters disagreeing at the end: the tie goes to the first debater', async () => {
    const wrongFirst = await run(
      createDebateOrchestra({ answers: mathAnswers }),
      (tasks) => ({ pro: byCall(tasks, [WRONG]), con: byCall(tasks, ['right']) }),
      {
        rounds: 1,
      },
    );
    expect(wrongFirst.trajectories.map((t) => t.outcome)).toEqual([0, 0]);
  });

  test("a judge model's verdict picks the winner, whose last answer is the team's", async () => {
    const judged = (verdict: string) =>
      run(
        createDebateOrchestra({ judge: 'model', answers: mathAnswers }),
        (tasks) => ({ pro: byCall(tasks, ['right']), con: byCall(tasks, [WRONG]), judge: () => `<verdict>${verdict}</verdict>` }),
        { rounds: 1 },
      );
    const pro = await judged('PRO');
    expect(pro.trajectories[0]!.turns.map((turn) => turn.agentId)).toEqual(['pro', 'con', 'judge']);
    expect(pro.trajectories.map((t) => t.outcome)).toEqual([1, 1]);
    expect(turnScores(pro.trajectories[0]!)).toEqual([1, 0, 1]);
    const con = await judged('con');
    expect(con.trajectories.map((t) => t.outcome)).toEqual([0, 0]);
    expect(turnScores(con.trajectories[0]!)).toEqual([1, 0, 0]);
    // A verdict naming no debater is invalid (strict parse): no winner, outcome 0, the judge penalised.
    const bad = await judged('alice');
    expect(bad.trajectories[0]!.turns[2]).toMatchObject({ valid: false });
    expect(bad.trajectories.map((t) => t.outcome)).toEqual([0, 0]);
    expect(rewards(bad.trajectories, perTurnAllocator)[0]).toEqual([1, 0, -0.1]);
  });

  test('the transcript numbers each debater’s rounds and keeps the judge apart', () => {
    const turn = (agentId: string, text: string) => ({ agentId, responseText: text }) as Trajectory['turns'][number];
    expect(debateTranscript([turn('pro', 'a'), turn('con', 'b'), turn('pro', 'c'), turn('judge', 'v')], ['pro', 'con'])).toEqual({
      debaters: ['pro', 'con'],
      turns: [
        { agent: 'pro', round: 1, text: 'a' },
        { agent: 'con', round: 1, text: 'b' },
        { agent: 'pro', round: 2, text: 'c' },
      ],
      judge: 'v',
    });
  });

  test('debater names are checked', () => {
    expect(() => createDebateOrchestra({ debaters: ['pro', 'judge'], answers: mathAnswers })).toThrow(/not a usable debater role/);
    expect(() => createDebateOrchestra({ debaters: ['pro', 'pro'], answers: mathAnswers })).toThrow(/not a usable debater role/);
  });
});

describe('runner settings are checked before a rollout', () => {
  const kernelWith = (config: Partial<UserConfig>) =>
    createKernel({
      cwd: process.cwd(),
      inline: { plugins: [envMathPlugin(), orchestraPlugin()], env: { name: 'math', levels: [1], testSize: 4 }, ...config },
    });

  test('an unknown runner is UNKNOWN_NAME with "Did you mean"', async () => {
    await expect(kernelWith({ orchestra: { name: 'majority' } })).rejects.toMatchObject({
      code: 'UNKNOWN_NAME',
      key: 'orchestra.name',
      hint: expect.stringContaining('Did you mean "majority_vote"?'),
    });
  });

  test.each([
    [{ solvers: 0 }, 'orchestra.solvers', />=1/],
    [{ solvers: 65 }, 'orchestra.solvers', /<=64/],
    [{ rounds: 0 }, 'orchestra.rounds', />=1/],
    [{ debaters: ['pro'] }, 'orchestra.debaters', />=2 items/],
    [{ debaters: ['pro', 'pro'] }, 'orchestra.debaters', /distinct/],
    [{ debaters: ['pro', 'judge'] }, 'orchestra.debaters', /none may be "judge"/],
    [{ debaters: ['pro', 'Con'] }, 'orchestra.debaters[1]', /lower-case role name/],
  ])('orchestra %j is CONFIG_INVALID at its key', async (orchestra, key, message) => {
    const error = await kernelWith({ orchestra: { name: 'debate', ...orchestra } }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', key, message: expect.stringMatching(message) });
  });

  test('a runner that compares answers needs the AnswerFormat orchestra.answerFormat names, found at validate', async () => {
    await expect(kernelWith({ orchestra: { name: 'majority_vote', answerFormat: 'maths' }, agents: { solver: {} } })).rejects.toMatchObject(
      {
        code: 'UNKNOWN_NAME',
        key: 'orchestra.answerFormat',
        hint: expect.stringContaining('Did you mean "math"?'),
      },
    );
    // Without env-math, which provides `math`, the message says what to add.
    const withoutMath = await createKernel({
      cwd: process.cwd(),
      inline: {
        plugins: [envSearchPlugin(), orchestraPlugin()],
        env: { name: 'search' },
        orchestra: { name: 'debate' },
        agents: { pro: {}, con: {} },
      },
    }).catch((e: unknown) => e);
    expect(withoutMath).toMatchObject({
      code: 'UNKNOWN_NAME',
      key: 'orchestra.answerFormat',
      message: 'no answer format named "math" is registered',
      hint: expect.stringContaining('add the plugin that provides the answer format "math"'),
    });
  });

  test('a role the runner calls without an agents entry is named at validate, with a suggestion', async () => {
    await expect(
      kernelWith({ orchestra: { name: 'debate', debaters: ['pro', 'con'] }, agents: { pro: {}, cons: {} } }),
    ).rejects.toMatchObject({ code: 'CONFIG_INVALID', key: 'agents.cons' });
    await expect(kernelWith({ orchestra: { name: 'summary' }, agents: { solver: {}, sumarizer: {} } })).rejects.toMatchObject({
      key: 'agents.sumarizer',
      message: expect.stringContaining('unknown agent role sumarizer'),
      hint: expect.stringContaining('Did you mean "summarizer"?'),
    });
    await expect(kernelWith({ orchestra: { name: 'summary' }, agents: { solver: {} } })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      key: 'agents.summarizer',
      hint: 'add agents.summarizer = { model: "<model id>" }',
    });
  });
});
