import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { normalizeAnswer } from '@drmas/core';
import {
  Bm25Index,
  DataFileError,
  formatCorpusJsonl,
  generateKnowledgeBase,
  KB_SINGLE_HOP,
  KB_TWO_HOP,
  loadCorpusJsonl,
  loadQaJsonl,
  SearchTaskSource,
} from '../src/index.js';

describe('generateKnowledgeBase', () => {
  const kb = generateKnowledgeBase({ seed: 5, entities: 400 });
  const docs = new Map(kb.documents.map((d) => [d.id, d]));

  it('is deterministic for a seed and differs across seeds', () => {
    expect(generateKnowledgeBase({ seed: 5, entities: 400 })).toEqual(kb);
    const other = generateKnowledgeBase({ seed: 6, entities: 400 });
    expect(other.documents.map((d) => d.contents)).not.toEqual(kb.documents.map((d) => d.contents));
  });

  it('has one Search-R1 style document per entity with unique titles and ids doc-0..doc-(n-1)', () => {
    expect(kb.documents.map((d) => d.id)).toEqual(kb.documents.map((_, i) => `doc-${i}`));
    expect(new Set(kb.documents.map((d) => d.title)).size).toBe(400);
    for (const d of kb.documents) {
      expect(d.contents).toBe(`"${d.title}"\n${d.text}`);
      const sentences = d.text.split(/(?<=\.) /);
      expect(sentences.length).toBeGreaterThanOrEqual(2);
      expect(sentences.length).toBeLessThanOrEqual(4);
    }
    expect(new Set(kb.documents.map((d) => d.kind))).toEqual(new Set(['country', 'city', 'river', 'person', 'company', 'invention']));
  });

  it('makes every question answerable from its supporting documents', () => {
    const ids = new Set<string>();
    for (const q of kb.questions) {
      ids.add(q.id);
      expect(q.hops).toBe(q.supportingDocIds.length);
      expect(q.dataSource).toBe(q.hops === 1 ? KB_SINGLE_HOP : KB_TWO_HOP);
      const last = docs.get(q.supportingDocIds.at(-1)!);
      expect(last).toBeDefined();
      expect(last!.text).toContain(q.answers[0]);
      if (q.hops === 2) {
        // The first document names the bridge entity, whose document holds the answer.
        const steps = q.steps!;
        expect(docs.get(steps[0]!.docId)!.text).toContain(steps[0]!.finds);
        expect(docs.get(steps[1]!.docId)!.title).toContain(steps[0]!.finds.replace(/^./, (c) => c.toUpperCase()));
      }
    }
    expect(ids.size).toBe(kb.questions.length);
    expect(new Set(kb.questions.map((q) => q.question)).size).toBe(kb.questions.length);
    expect(kb.questions.filter((q) => q.hops === 1).length).toBeGreaterThan(100);
    expect(kb.questions.filter((q) => q.hops === 2).length).toBeGreaterThan(100);
  });

  it('puts the supporting document in the BM25 top 3 for most single-hop questions', () => {
    const index = new Bm25Index(kb.documents);
    const single = kb.questions.filter((q) => q.hops === 1);
    const found = single.filter((q) => index.search(q.question, 3).some((h) => h.document.id === q.supportingDocIds[0])).length;
    const rate = found / single.length;
    console.log(`BM25 top-3 recall of the supporting document, ${single.length} single-hop questions: ${(100 * rate).toFixed(1)}%`);
    expect(rate).toBeGreaterThan(0.9);
    // The ideal first query of a two-hop question finds the first supporting document too.
    const twoHop = kb.questions.filter((q) => q.hops === 2);
    const firstHop = twoHop.filter((q) => index.search(q.steps![0]!.query, 3).some((h) => h.document.id === q.supportingDocIds[0])).length;
    expect(firstHop / twoHop.length).toBeGreaterThan(0.9);
  });

  it('rejects too few entities', () => {
    expect(() => generateKnowledgeBase({ seed: 1, entities: 5 })).toThrow(/entities/);
  });
});

describe('SearchTaskSource', () => {
  const kb = generateKnowledgeBase({ seed: 9, entities: 200 });
  const source = new SearchTaskSource(kb.questions, { seed: 1, testFraction: 0.2 });

  it('splits deterministically into disjoint train and test sets', () => {
    const test = source.test();
    expect(test.length).toBe(Math.round(kb.questions.length * 0.2));
    const testIds = new Set(test.map((q) => q.id));
    const testTexts = new Set(test.map((q) => normalizeAnswer(q.question)));
    for (const q of source.train) {
      expect(testIds.has(q.id)).toBe(false);
      expect(testTexts.has(normalizeAnswer(q.question))).toBe(false);
    }
    expect(source.train.length + test.length).toBe(kb.questions.length);
    expect(new SearchTaskSource(kb.questions, { seed: 1, testFraction: 0.2 }).test()).toEqual(test);
    expect(new SearchTaskSource(kb.questions, { seed: 2, testFraction: 0.2 }).test()).not.toEqual(test);
  });

  it('never hands out a held-out question over several epochs', () => {
    const testIds = new Set(source.test().map((q) => q.id));
    const { tasks } = source.batch(0, source.train.length * 3 + 7);
    expect(tasks.some((t) => testIds.has(t.id))).toBe(false);
    // each epoch is a permutation of the training set
    const firstEpoch = tasks.slice(0, source.train.length).map((t) => t.id);
    expect(new Set(firstEpoch).size).toBe(source.train.length);
  });

  it('drops training questions whose text equals a held-out one', () => {
    const dup = [
      { id: 'a', question: 'Where is X?', answers: ['Y'], supportingDocIds: [], dataSource: 'd' },
      { id: 'b', question: 'where is x', answers: ['Y'], supportingDocIds: [], dataSource: 'd' },
      ...kb.questions.slice(0, 50),
    ];
    for (let seed = 0; seed < 20; seed++) {
      const s = new SearchTaskSource(dup, { seed, testFraction: 0.3 });
      const testTexts = new Set(s.test().map((q) => normalizeAnswer(q.question)));
      expect(s.train.some((q) => testTexts.has(normalizeAnswer(q.question)))).toBe(false);
    }
  });

  it('resumes exactly from a cursor', () => {
    const whole = source.batch(0, 50);
    expect(whole.nextCursor).toBe(50);
    const first = source.batch(0, 20);
    const second = new SearchTaskSource(kb.questions, { seed: 1, testFraction: 0.2 }).batch(first.nextCursor, 30);
    expect([...first.tasks, ...second.tasks]).toEqual(whole.tasks);
    const n = source.train.length;
    expect(source.batch(n - 2, 4).tasks).toEqual([...source.batch(n - 2, 2).tasks, ...source.batch(n, 2).tasks]);
    expect(() => source.batch(-1, 2)).toThrow(/cursor/);
  });
});

describe('JSONL loaders', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'env-search-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads QA records with golden_answers or answer', async () => {
    const file = join(dir, 'nq_test.jsonl');
    await writeFile(
      file,
      [
        '{"id": "q1", "question": "who wrote x?", "golden_answers": ["A B", "B"]}',
        '',
        '{"question": "when?", "answer": 1873, "data_source": "custom"}',
        '{"question": "where?", "answer": ["Osmara"]}',
      ].join('\n'),
    );
    const questions = await loadQaJsonl(file);
    expect(questions).toEqual([
      { id: 'q1', question: 'who wrote x?', answers: ['A B', 'B'], supportingDocIds: [], dataSource: 'nq_test' },
      { id: 'nq_test.jsonl:3', question: 'when?', answers: ['1873'], supportingDocIds: [], dataSource: 'custom' },
      { id: 'nq_test.jsonl:4', question: 'where?', answers: ['Osmara'], supportingDocIds: [], dataSource: 'nq_test' },
    ]);
  });

  it.each([
    ['{"question": "q"}', 2, 'golden_answers'],
    ['{"question": "", "answer": "a"}', 2, 'question'],
    ['{"question": "q", "golden_answers": ["a", 3.5, null]}', 2, 'golden_answers[2]'],
    ['{"question": "q", "answer": "a", "data_source": 5}', 2, 'data_source'],
  ])('names file, line and field for %s', async (bad, line, field) => {
    const file = join(dir, `bad-${field}.jsonl`);
    await writeFile(file, `{"question": "fine", "answer": "a"}\n${bad}\n`);
    const error = await loadQaJsonl(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataFileError);
    expect((error as DataFileError).line).toBe(line);
    expect((error as DataFileError).field).toBe(field);
    expect(error).toMatchObject({ code: 'DATASET_INVALID', file, message: expect.stringContaining(`line ${line} (field "${field}")`) });
  });

  it('reports invalid JSON and a missing file', async () => {
    const file = join(dir, 'broken.jsonl');
    await writeFile(file, '{"question": "q", "answer": "a"}\n{"question": \n');
    await expect(loadQaJsonl(file)).rejects.toMatchObject({ file, message: expect.stringMatching(/^line 2: not valid JSON/) });
    const absent = join(dir, 'absent.jsonl');
    await expect(loadQaJsonl(absent)).rejects.toMatchObject({
      file: absent,
      message: expect.stringMatching(/^cannot read the file: .*ENOENT/),
    });
  });

  it('round-trips a Search-R1 corpus and rejects bad corpus lines', async () => {
    const kb = generateKnowledgeBase({ seed: 2, entities: 20 });
    const file = join(dir, 'corpus.jsonl');
    await writeFile(file, formatCorpusJsonl(kb.documents));
    expect(await loadCorpusJsonl(file)).toEqual(kb.documents.map((d) => ({ id: d.id, contents: d.contents })));

    const bad = join(dir, 'bad-corpus.jsonl');
    await writeFile(bad, '{"id": 0, "contents": "\\"T\\"\\ntext"}\n{"id": 1, "title": "T", "text": "x"}\n');
    await expect(loadCorpusJsonl(bad)).rejects.toMatchObject({ file: bad, message: expect.stringMatching(/^line 2 \(field "contents"\)/) });
    await writeFile(bad, '{"id": 0, "contents": "a"}\n{"id": "0", "contents": "b"}\n');
    await expect(loadCorpusJsonl(bad)).rejects.toThrow(/^line 2 \(field "id"\): duplicate id "0" \(first on line 1\)/);
  });
});
