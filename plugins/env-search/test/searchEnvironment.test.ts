import { afterEach, describe, expect, test } from '@jest/globals';
import { createKernel, Environment } from '@drmas/core';
import type { SearchQuestion } from '../src/index.js';
import { TempProject } from '../../../test/support/tempProject.js';

const projects: TempProject[] = [];
afterEach(() => {
  while (projects.length) projects.pop()!.dispose();
});

/** Two hand-written questions over a three-document corpus, loaded through `plugins: ['env-search']`. */
async function searchEnvironment(env: Record<string, unknown> = {}): Promise<Environment<SearchQuestion>> {
  const jsonl = (records: object[]) => records.map((r) => JSON.stringify(r)).join('\n');
  const p = new TempProject('env-search').write({
    'config/drmas.config.json': {
      plugins: ['env-search'],
      env: { name: 'search', questionsFile: './data/qa.jsonl', corpusFile: './data/corpus.jsonl', testFraction: 0, topk: 1, ...env },
    },
    'config/data/qa.jsonl': jsonl([
      { id: 'q1', question: 'Where was Varnok Telli born?', golden_answers: ['Osmara'] },
      { id: 'q2', question: 'Who invented the lumen valve?', golden_answers: ['Varnok Telli'] },
    ]),
    'config/data/corpus.jsonl': jsonl([
      { id: 'd1', contents: '"Varnok Telli"\nVarnok Telli is a chemist born in Osmara.' },
      { id: 'd2', contents: '"Lumen valve"\nThe lumen valve was invented by Varnok Telli.' },
      { id: 'd3', contents: '"Osmara"\nOsmara is a city on the river Quell.' },
    ]),
  });
  projects.push(p);
  const { kernel } = await createKernel({ cwd: p.dir, configPath: p.path('config', 'drmas.config.json') });
  const environment = kernel.getNamed(Environment, 'search') as Environment<SearchQuestion>;
  await environment.init();
  return environment;
}

describe("plugins: ['env-search']", () => {
  test('a search appends the top document; an answer scores exact match, its step score its F1', async () => {
    const environment = await searchEnvironment();
    expect(environment.maxRounds).toBe(4);
    const tasks = environment.batch(0, 2).tasks;
    const task = tasks.find((t) => t.id === 'q1')!;
    const [partial, exact] = [environment.reset(task), environment.reset(task)];
    await environment.advance(
      [partial, exact],
      [
        { type: 'search', content: 'Varnok Telli born' },
        { type: 'answer', content: '<answer>Osmara</answer>' },
      ],
    );
    expect(partial.observation()).toBe(
      'Question: Where was Varnok Telli born?\n<search>Varnok Telli born</search>\n' +
        '<information>Doc 1(Title: "Varnok Telli") Varnok Telli is a chemist born in Osmara.</information>',
    );
    expect([partial.done, partial.roundScore]).toEqual([false, 0]);
    expect([exact.done, exact.outcome, exact.roundScore]).toEqual([true, 1, 1]);
    await environment.advance([partial], [{ type: 'answer', content: '<answer>the city of Osmara</answer>' }]);
    // "the" is dropped by normalization: tokens [city, of, osmara] against [osmara]: precision 1/3, recall 1, F1 1/2.
    expect(partial.outcome).toBe(0);
    expect(partial.roundScore).toBeCloseTo(0.5, 12);
    expect(partial.metrics()).toEqual({ f1: partial.roundScore, searches: 1, answered: 1 });
  });

  test('env.maxRounds cuts an episode; testFraction holds questions out', async () => {
    const short = await searchEnvironment({ maxRounds: 1 });
    const episode = short.reset(short.batch(0, 1).tasks[0]!);
    await short.advance([episode], [{ type: 'invalid', content: 'hmm' }]);
    expect([episode.done, episode.outcome]).toEqual([false, 0]);
    const split = await searchEnvironment({ testFraction: 0.5 });
    const held = split.test().map((t) => t.id);
    expect(held).toHaveLength(1);
    expect(split.batch(0, 4).tasks.map((t) => t.id)).not.toContain(held[0]);
  });

  test('questions without documents to search name env.corpusFile', async () => {
    await expect(searchEnvironment({ corpusFile: undefined })).rejects.toMatchObject({ code: 'CONFIG_INVALID', key: 'env.corpusFile' });
  });

  test('an unreadable data file names the env key and the file; an unreachable retriever names env.retriever.urls', async () => {
    await expect(searchEnvironment({ corpusFile: './data/absent.jsonl' })).rejects.toMatchObject({
      code: 'DATASET_INVALID',
      key: 'env.corpusFile',
      message: expect.stringMatching(/^search environment: .*absent\.jsonl: cannot read the file: ENOENT/),
    });
    const remote = await searchEnvironment({ retriever: { urls: ['http://127.0.0.1:9/retrieve'], timeoutMs: 500, maxRetries: 0 } });
    const episode = remote.reset(remote.batch(0, 1).tasks[0]!);
    await expect(remote.advance([episode], [{ type: 'search', content: 'Osmara' }])).rejects.toMatchObject({
      code: 'SERVICE_FAILED',
      key: 'env.retriever.urls',
      message: expect.stringMatching(/^search environment: retriever request failed after 1 attempt/),
    });
  });
});
