import {
  applySearches,
  Bm25Retriever,
  DemonstrationBuilder,
  formatInformation,
  generateKnowledgeBase,
  INVALID_ACTION_FEEDBACK,
  parseSearchAction,
  parseVerifierDecision,
  SearchEnvError,
  SearchEpisode,
  type SearchQuestion,
} from '../src/index.js';

const question: SearchQuestion = {
  id: 'q-1',
  question: 'Where was Varnok Telli born?',
  answers: ['Osmara'],
  supportingDocIds: ['doc-1'],
  hops: 1,
  dataSource: 'kb-1hop',
};
const hits = [
  { document: { id: 'doc-1', contents: '"Varnok Telli"\nVarnok Telli is a chemist born in Osmara. Telli was born in 1841.' }, score: 2.5 },
  { document: { id: 'doc-2', contents: '"Lumen valve"\nThe lumen valve is a device invented by Varnok Telli in 1873.' }, score: 1.1 },
];

describe('formatInformation', () => {
  it('writes documents as Search-R1 does', () => {
    expect(formatInformation(hits)).toBe(
      '<information>Doc 1(Title: "Varnok Telli") Varnok Telli is a chemist born in Osmara. Telli was born in 1841.\n' +
        'Doc 2(Title: "Lumen valve") The lumen valve is a device invented by Varnok Telli in 1873.</information>',
    );
    expect(formatInformation([])).toBe('<information>No documents found.</information>');
  });
});

describe('SearchEpisode', () => {
  it('records searches, renders the observation and rewards a correct answer', () => {
    const episode = new SearchEpisode(question);
    const information = episode.applySearch('Varnok Telli born', hits.slice(0, 1));
    expect(episode.rounds).toBe(1);
    expect(episode.done).toBe(false);
    expect(episode.observation()).toBe(`Question: Where was Varnok Telli born?\n<search>Varnok Telli born</search>\n${information}`);
    episode.applyAnswer('<think>it says Osmara</think><answer>draft</answer><answer>the Osmara.</answer>');
    expect(episode.done).toBe(true);
    expect(episode.answer).toBe('the Osmara.');
    expect(episode.reward()).toBe(1);
    expect(episode.score()).toEqual({ exactMatch: 1, f1: 1 });
    expect(() => episode.applySearch('more', [])).toThrow(SearchEnvError);
  });

  it('ends unanswered after maxRounds (default 4), with reward 0', () => {
    const episode = new SearchEpisode(question);
    for (let i = 0; i < 3; i++) episode.applySearch(`query ${i}`, hits);
    expect(episode.done).toBe(false);
    expect(episode.applyInvalid('I am thinking')).toBe(INVALID_ACTION_FEEDBACK);
    expect(episode.rounds).toBe(4);
    expect(episode.done).toBe(true);
    expect(episode.answer).toBeUndefined();
    expect(episode.reward()).toBe(0);
    expect(() => episode.applyAnswer('<answer>Osmara</answer>')).toThrow(/q-1 is finished \(4 rounds\)/);
    const short = new SearchEpisode(question, { maxRounds: 1 });
    short.applySearch('x', []);
    expect(short.done).toBe(true);
    expect(() => new SearchEpisode(question, { maxRounds: 0 })).toThrow(/maxRounds/);
  });

  it('reads maxSteps, the old name of maxRounds; both given is an error', () => {
    const old = new SearchEpisode(question, { maxSteps: 2 });
    old.applySearch('x', []);
    expect(old.done).toBe(false);
    old.applySearch('y', []);
    expect([old.done, old.rounds, old.maxRounds]).toEqual([true, 2, 2]);
    expect(() => new SearchEpisode(question, { maxSteps: 0 })).toThrow('options.maxSteps: must be an integer >= 1, got 0');
    expect(() => new SearchEpisode(question, { maxSteps: 2, maxRounds: 2 })).toThrow(
      'options.maxSteps: is the old name of options.maxRounds, which is set too: remove it',
    );
  });

  it('scores a wrong answer 0 with partial F1', () => {
    const episode = new SearchEpisode({ ...question, answers: ['Varnok Telli'] });
    episode.applyAnswer('Telli');
    expect(episode.score()).toEqual({ exactMatch: 0, f1: 2 / 3 });
  });

  it('parses agent actions and verifier decisions', () => {
    expect(parseSearchAction('<think>x</think><search> Varnok Telli born </search>')).toEqual({
      type: 'search',
      query: 'Varnok Telli born',
    });
    expect(parseSearchAction('<answer>Osmara</answer><search>late</search>')).toEqual({ type: 'answer', answer: 'Osmara' });
    expect(parseSearchAction('nothing')).toEqual({ type: 'invalid' });
    expect(parseVerifierDecision('<think>enough</think><verify> YES </verify>')).toBe(true);
    expect(parseVerifierDecision('<verify>no</verify>')).toBe(false);
    expect(parseVerifierDecision('maybe')).toBeUndefined();
  });

  it('runs a batch of searches through one retriever call', async () => {
    const kb = generateKnowledgeBase({ seed: 8, entities: 60 });
    const retriever = new Bm25Retriever(kb.documents);
    let calls = 0;
    const counting = { search: (q: string[], k: number) => (calls++, retriever.search(q, k)) };
    const episodes = kb.questions.slice(0, 5).map((q) => new SearchEpisode(q));
    const blocks = await applySearches(
      counting,
      episodes.map((episode) => ({ episode, query: episode.question.question })),
      3,
    );
    expect(calls).toBe(1);
    expect(blocks).toHaveLength(5);
    expect(episodes.every((e) => e.rounds === 1)).toBe(true);
    expect(blocks[0]).toMatch(/^<information>Doc 1\(Title: /);
  });
});

describe('DemonstrationBuilder', () => {
  const kb = generateKnowledgeBase({ seed: 12, entities: 80 });
  const builder = new DemonstrationBuilder(kb);

  it('writes a single-hop trajectory: no, search, yes, answer', () => {
    const q = kb.questions.find((x) => x.question.startsWith('Where was'))!;
    const demo = builder.build(q);
    expect(demo.turns.map((t) => t.agent)).toEqual(['verifier', 'search', 'verifier', 'answer']);
    const name = /Where was (.*) born\?/.exec(q.question)![1];
    expect(demo.turns.map((t) => t.target)).toEqual([
      '<verify>no</verify>',
      `<think>need birthplace</think><search>${name} born</search>`,
      '<verify>yes</verify>',
      `<answer>${q.answers[0]}</answer>`,
    ]);
    expect(demo.turns[0]!.observation).toBe(`Question: ${q.question}`);
    expect(demo.turns[2]!.observation).toContain(q.answers[0]);
    expect(demo.episode.reward()).toBe(1);
  });

  it('writes two searches for a two-hop question, every answer reaching reward 1', () => {
    const q = kb.questions.find((x) => x.question.startsWith('In which city was the inventor'))!;
    const demo = builder.build(q);
    expect(demo.turns.map((t) => t.agent)).toEqual(['verifier', 'search', 'verifier', 'search', 'verifier', 'answer']);
    expect(demo.turns[1]!.target).toMatch(/<search>.* inventor<\/search>$/);
    expect(demo.turns[3]!.observation).toContain(q.steps![0]!.finds);
    expect(demo.turns[3]!.target).toBe(`<think>need birthplace</think><search>${q.steps![0]!.finds} born</search>`);
    for (const question of kb.questions) expect(builder.build(question).episode.reward()).toBe(1);
  });

  it('refuses questions without solution steps', () => {
    expect(() => builder.build(question)).toThrow(/no solution steps/);
  });
});
