import { Bm25Index, Bm25Retriever, generateKnowledgeBase, Tokenizer, type SearchDocument } from '../src/index.js';

// Stop words are kept here so every token counts; with k1 = 0.9, b = 0.4:
//   doc-a  `"Apple"\napple pie recipe`                 tokens apple apple pie recipe            |d| = 4
//   doc-b  `"Banana"\nbanana bread recipe with apple`  tokens banana banana bread recipe with apple |d| = 6
//   doc-c  `"Cherry"\ncherry tart`                     tokens cherry cherry tart                |d| = 3
//   doc-d  `"Pie"\npie crust basics for any pie`       tokens pie pie crust basics for any pie  |d| = 7
// N = 4, avgdl = 20 / 4 = 5.
const corpus: SearchDocument[] = [
  { id: 'doc-a', contents: '"Apple"\napple pie recipe' },
  { id: 'doc-b', contents: '"Banana"\nbanana bread recipe with apple' },
  { id: 'doc-c', contents: '"Cherry"\ncherry tart' },
  { id: 'doc-d', contents: '"Pie"\npie crust basics for any pie' },
];

describe('Tokenizer', () => {
  it('lower-cases, splits on non-alphanumerics and drops Lucene English stop words by default', () => {
    expect(new Tokenizer().tokenize('The Capital of Dravonia, in 1873! (Ölby)')).toEqual(['capital', 'dravonia', '1873', 'ölby']);
    expect(new Tokenizer({ stopwords: false }).tokenize('The capital-of X')).toEqual(['the', 'capital', 'of', 'x']);
    expect(new Tokenizer({ stopwords: new Set(['x']) }).tokenize('the X y')).toEqual(['the', 'y']);
  });
});

describe('Bm25Index', () => {
  const index = new Bm25Index(corpus, { stopwords: false });

  it('scores "apple pie" as computed by hand', () => {
    // df(apple) = 2, df(pie) = 2  =>  idf = ln(1 + (4 - 2 + 0.5) / (2 + 0.5)) = ln 2 for both.
    // doc-a: norm = 0.9 * (0.6 + 0.4 * 4/5) = 0.828;  ln2 * (2 / 2.828 + 1 / 1.828) = 0.8693866...
    // doc-d: norm = 0.9 * (0.6 + 0.4 * 7/5) = 1.044;  ln2 * 3 / 4.044               = 0.5142035...
    // doc-b: norm = 0.9 * (0.6 + 0.4 * 6/5) = 0.972;  ln2 * 1 / 1.972               = 0.3514945...
    // doc-c shares no term and is not returned.
    const ln2 = Math.log(2);
    const hits = index.search('apple pie', 10);
    expect(hits.map((h) => h.document.id)).toEqual(['doc-a', 'doc-d', 'doc-b']);
    expect(hits[0]!.score).toBeCloseTo(ln2 * (2 / 2.828 + 1 / 1.828), 9);
    expect(hits[1]!.score).toBeCloseTo((ln2 * 3) / 4.044, 9);
    expect(hits[2]!.score).toBeCloseTo(ln2 / 1.972, 9);
    expect(Math.abs(hits[0]!.score - 0.8693866)).toBeLessThan(1e-6);
  });

  it('gives rarer terms a larger idf ("apple crust")', () => {
    // df(crust) = 1  =>  idf = ln(1 + 3.5 / 1.5) = ln(10/3).
    // doc-d: ln(10/3) * 1 / (1 + 1.044) = 0.5890279...;  doc-a: ln2 * 2 / 2.828 = 0.4902054...;  doc-b: 0.3514945...
    const hits = index.search('apple crust', 10);
    expect(hits.map((h) => h.document.id)).toEqual(['doc-d', 'doc-a', 'doc-b']);
    expect(Math.abs(hits[0]!.score - Math.log(10 / 3) / 2.044)).toBeLessThan(1e-9);
    expect(Math.abs(hits[1]!.score - (Math.log(2) * 2) / 2.828)).toBeLessThan(1e-9);
    expect(index.idf('crust')).toBeCloseTo(Math.log(10 / 3), 12);
  });

  it('counts a repeated query term twice, cuts at topk and breaks ties by document order', () => {
    const once = index.search('tart', 10)[0]!.score;
    expect(index.search('tart tart', 10)[0]!.score).toBeCloseTo(2 * once, 12);
    expect(index.search('apple pie', 2).map((h) => h.document.id)).toEqual(['doc-a', 'doc-d']);
    expect(index.search('unknownword', 5)).toEqual([]);
    const twins = new Bm25Index([
      { id: 'x', contents: 'other' },
      { id: 'y', contents: 'zeta' },
      { id: 'z', contents: 'zeta' },
      { id: 'w', contents: 'zeta' },
    ]);
    expect(twins.search('zeta', 2).map((h) => h.document.id)).toEqual(['y', 'z']);
    expect(twins.search('zeta', 10).map((h) => h.document.id)).toEqual(['y', 'z', 'w']);
  });

  it('selects the same top-k as a full ranking', () => {
    const kb = generateKnowledgeBase({ seed: 3, entities: 300 });
    const big = new Bm25Index(kb.documents);
    for (const q of kb.questions.slice(0, 60)) {
      const full = big.search(q.question, 10000);
      expect(big.search(q.question, 5)).toEqual(full.slice(0, 5));
      for (let i = 1; i < full.length; i++) expect(full[i - 1]!.score).toBeGreaterThanOrEqual(full[i]!.score);
    }
  });

  it('rejects bad options and topk', () => {
    expect(() => new Bm25Index([], { k1: -1 })).toThrow(/options\.k1/);
    expect(() => index.search('apple', 0)).toThrow(/topk/);
  });

  it('answers through the Retriever interface with one list per query', async () => {
    const retriever = new Bm25Retriever(corpus, { stopwords: false });
    const lists = await retriever.search(['apple pie', 'cherry', 'nothing here'], 2);
    expect(lists.map((l) => l.map((h) => h.document.id))).toEqual([['doc-a', 'doc-d'], ['doc-c'], []]);
  });

  it('indexes and searches ~10k documents quickly', () => {
    const kb = generateKnowledgeBase({ seed: 11, entities: 10000 });
    const started = performance.now();
    const big = new Bm25Index(kb.documents);
    const queries = kb.questions.slice(0, 1000).map((q) => q.question);
    big.searchBatch(queries, 3);
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
