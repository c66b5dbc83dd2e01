import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Tokenizer } from '@drmas/models';
import { SearchEnvironment } from '@drmas/plugin-env-search';
import {
  executorSection,
  GraphExecutor,
  metricDeltaAllocator,
  OrchestraRunner,
  PromptedAgent,
  TeacherBackend,
  type Agent,
  type EpisodeTrace,
  type Orchestra,
  type TeacherPolicy,
} from '@drmas/plugin-orchestra';
import { BASE_CHECKPOINT } from '../src/searchPreset.js';
import { createMaskOrchestra, maskF1Allocator } from '../src/workflows/mAsk.js';
import { createQdRagOrchestra } from '../src/workflows/qdRag.js';

// The two search workflows' control flow and reward allocation, with scripted agents: a TeacherBackend answers each
// prompt by the role it is for (and how many <information> blocks it holds), on a two-document corpus whose question
// has the golden answer "Osmara". The F1 values below are worked by hand (SQuAD token F1).
const dir = mkdtempSync(path.join(tmpdir(), 'search-workflows-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const read = (file: string) => JSON.parse(readFileSync(path.join(BASE_CHECKPOINT, file), 'utf8')) as Record<string, unknown>;
const codec = Tokenizer.fromJSON(read('tokenizer.json') as never, read('tokenizer_config.json'));
let environment: SearchEnvironment;

beforeAll(async () => {
  const questions = path.join(dir, 'questions.jsonl');
  const corpus = path.join(dir, 'corpus.jsonl');
  writeFileSync(questions, `${JSON.stringify({ id: 'q1', question: 'Where was Varnok Telli born?', golden_answers: ['Osmara'] })}\n`);
  writeFileSync(
    corpus,
    [
      { id: 'd1', contents: '"Varnok Telli"\nVarnok Telli is a chemist born in Osmara.' },
      { id: 'd2', contents: '"Osmara"\nOsmara is a city on the Lune river.' },
    ]
      .map((doc) => JSON.stringify(doc))
      .join('\n'),
  );
  environment = new SearchEnvironment({ questionsFile: questions, corpusFile: corpus, testFraction: 0, maxRounds: 4, topk: 1 });
  await environment.init();
});

const ROLE = /(Plan|Search|Summarize|Update|Answer|Decompose|Evidence): /;
const informationBlocks = (prompt: string) => prompt.split('<information>').length - 1;

/** A teacher answering each role by a script: `script[role](information blocks in the prompt)`. */
function scripted(script: Record<string, (blocks: number) => string>): { policy: TeacherPolicy; roles: string[] } {
  const roles: string[] = [];
  return {
    roles,
    policy: (prompt) => {
      const role = ROLE.exec(prompt)?.[1] ?? 'unknown';
      roles.push(role);
      return script[role]!(informationBlocks(prompt));
    },
  };
}

function agentsOf(orchestra: Orchestra): Map<string, Agent> {
  return new Map(Object.entries(orchestra.agents).map(([role, options]) => [role, new PromptedAgent({ ...options, role })]));
}

function runnerOptions(orchestra: Orchestra, policy: TeacherPolicy, maxLoops: number) {
  const backend = new TeacherBackend(codec, policy);
  return {
    environment,
    orchestra,
    agents: agentsOf(orchestra),
    engineFor: () => ({ workerGroupId: 'policy', backend, codec }),
    settings: { maxLoops },
  };
}

const request = () => ({
  tasks: environment.batch(0, 1).tasks,
  samplesPerTask: 1,
  seed: 7,
  idPrefix: 's1r0',
  sampleStreams: 'row' as const,
});

async function onExecutor(orchestra: Orchestra, policy: TeacherPolicy, maxLoops = 3) {
  const { kind: _kind, ...executor } = executorSection.parse({});
  const run = await new GraphExecutor({ ...runnerOptions(orchestra, policy, maxLoops), executor }).run(request());
  return { run, trace: run.traces[0]!, trajectory: run.trajectories[0]! };
}

/** Turn index -> reward, from `allocator` over the trace. */
function rewards(trace: EpisodeTrace, absoluteAgents: string[], allocator = maskF1Allocator): number[] {
  const byTurn = allocator.allocate(trace, { invalidPenalty: () => 0, absoluteAgents });
  return [...byTurn.keys()].sort((a, b) => a - b).map((turn) => Number(byTurn.get(turn)!.toFixed(4)));
}

/** M-ASK: a wrong plan, a partly right answer after one search, the right one after two, then `<end>`. */
const MASK_SCRIPT = {
  Plan: () => '<think>birthplace</think><answer>Lune</answer>',
  Search: (blocks: number) => (blocks < 2 ? `<search>${blocks === 0 ? 'Varnok Telli born' : 'Osmara'}</search>` : '<search><end></search>'),
  Summarize: () => '<summary>born in Osmara</summary>',
  Update: () => '<notes>Osmara</notes>',
  // F1("Osmara city", "Osmara") = 2 * (1/2 * 1) / (1/2 + 1) = 2/3; F1("Osmara", "Osmara") = 1.
  Answer: (blocks: number) => (blocks === 1 ? '<answer>Osmara city</answer>' : '<answer>Osmara</answer>'),
};

describe('M-ASK', () => {
  test('plan, then search -> retrieve -> summary -> update -> answer rounds until <end>; mask_f1 gives F1(a0), F1(a_t) and the gains', async () => {
    const { policy, roles } = scripted(MASK_SCRIPT);
    const { trace, trajectory } = await onExecutor(createMaskOrchestra(), policy);
    expect(trace.status).toBe('completed');
    expect(trace.executions.map((e) => e.node)).toEqual(
      ['plan', 'score_plan']
        .concat(['search', 'retrieve', 'summary', 'update', 'answer', 'score_answer'])
        .concat(['search', 'retrieve', 'summary', 'update', 'answer', 'score_answer'])
        .concat(['search', 'env.step']),
    );
    expect(roles).toEqual(['Plan', 'Search', 'Summarize', 'Update', 'Answer', 'Search', 'Summarize', 'Update', 'Answer', 'Search']);
    expect(trace.executions.find((e) => e.node === 'retrieve')!.output).toContain('Varnok Telli is a chemist born in Osmara.');
    // The final answer is the Answerer's last: exact match.
    expect(trajectory.outcome).toBe(1);
    expect(trajectory.turns.map((t) => t.agentId)).toEqual(
      ['planner'].concat(
        ['searcher', 'summarizer', 'updater', 'answerer'],
        ['searcher', 'summarizer', 'updater', 'answerer'],
        ['searcher'],
      ),
    );
    // Planner F1(a0) = 0; round 1 gains 2/3 - 0; round 2 gains 1 - 2/3; the <end> search 0.
    expect(rewards(trace, ['planner', 'answerer'])).toEqual([0, 0.6667, 0.6667, 0.6667, 0.6667, 0.3333, 0.3333, 0.3333, 1, 0]);
  });

  test('orchestra.maxLoops bounds the rounds; an <end> in the first round stops at once with the plan as the answer', async () => {
    const twoRounds = await onExecutor(
      createMaskOrchestra(),
      scripted({ ...MASK_SCRIPT, Search: () => '<search>Osmara</search>' }).policy,
      2,
    );
    expect(twoRounds.trace.executions.filter((e) => e.node === 'search')).toHaveLength(2);
    expect(twoRounds.trace.executions.at(-2)!.node).toBe('score_answer');

    const ended = await onExecutor(createMaskOrchestra(), scripted({ ...MASK_SCRIPT, Search: () => '<search><end></search>' }).policy);
    expect(ended.trace.executions.map((e) => e.node)).toEqual(['plan', 'score_plan', 'search', 'env.step']);
    // The plan's answer "Lune" is the episode's answer: F1 0, and the search that ended gets 0.
    expect(ended.trajectory.outcome).toBe(0);
    expect(rewards(ended.trace, ['planner', 'answerer'])).toEqual([0, 0]);
  });

  test('the lock-step blocks run the same calls in the same order, with the same answer', async () => {
    const graph = scripted(MASK_SCRIPT);
    const blocks = scripted(MASK_SCRIPT);
    const executor = await onExecutor(createMaskOrchestra(), graph.policy);
    const lockstep = await new OrchestraRunner(runnerOptions(createMaskOrchestra(), blocks.policy, 3)).run(request());
    expect(blocks.roles).toEqual(graph.roles);
    const turns = (t: typeof executor.trajectory) => t.turns.map((turn) => [turn.agentId, turn.promptText, turn.responseText]);
    expect(turns(lockstep.trajectories[0]!)).toEqual(turns(executor.trajectory));
    expect(lockstep.trajectories[0]!.outcome).toBe(1);
  });
});

describe('query-decomposition RAG', () => {
  const QD_SCRIPT = {
    Decompose: () => '<queries>Varnok Telli born; Lune river</queries>',
    Evidence: () => '<evidence>born in Osmara</evidence>',
    Answer: () => '<answer>Osmara city</answer>',
  };

  test('decompose -> retrieve (every sub-query in one search) -> evidence -> answer; f1_delta with every agent absolute gives each the final F1', async () => {
    const { policy, roles } = scripted(QD_SCRIPT);
    const { trace, trajectory } = await onExecutor(createQdRagOrchestra({ evidence: true }), policy);
    expect(trace.executions.map((e) => e.node)).toEqual(['decompose', 'retrieve', 'evidence', 'answer', 'env.step']);
    expect(roles).toEqual(['Decompose', 'Evidence', 'Answer']);
    const retrieved = trace.executions[1]!.output as string;
    // topk 1 per sub-query: d1 for the first, d2 for the second, in one <information> block.
    expect(retrieved).toMatch(/^<information>Doc 1\(Title: "Varnok Telli"\).*\nDoc 2\(Title: "Osmara"\)/);
    expect(trace.executions[3]!.input).toContain('<search>Varnok Telli born; Lune river</search>');
    expect(trajectory.outcome).toBe(0);
    const f1 = metricDeltaAllocator('f1_delta', 'f1');
    expect(rewards(trace, ['decomposer', 'evidence', 'answerer'], f1)).toEqual([0.6667, 0.6667, 0.6667]);
  });

  test('without the evidence agent; an invalid decomposition searches the question itself', async () => {
    const { policy, roles } = scripted({ ...QD_SCRIPT, Decompose: () => 'no tags here' });
    const { trace } = await onExecutor(createQdRagOrchestra(), policy);
    expect(roles).toEqual(['Decompose', 'Answer']);
    expect(trace.executions.map((e) => e.node)).toEqual(['decompose', 'retrieve', 'answer', 'env.step']);
    expect(trace.executions[2]!.input).toContain('<search>Where was Varnok Telli born?</search>');
  });
});
