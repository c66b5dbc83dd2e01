import { describe, expect, test } from '@jest/globals';
import { formatInformation, generateKnowledgeBase, KB_TWO_HOP, type SearchDocument, type SearchQuestion } from '@drmas/plugin-env-search';
import { searchTeacher } from '../src/searchTeacher.js';

const kb = generateKnowledgeBase({ seed: 0, entities: 60 });
const teacher = searchTeacher(kb);
const documents = new Map(kb.documents.map((d) => [d.id, d]));

/** A prompt as the preset's agents send it: chat template around `<Role>: ` and the observation. */
function prompt(
  role: 'Verify' | 'Search' | 'Answer',
  question: SearchQuestion,
  searches: Array<{ query: string; docs: SearchDocument[] }> = [],
): string {
  const parts = [`Question: ${question.question}`];
  for (const { query, docs } of searches)
    parts.push(`<search>${query}</search>`, formatInformation(docs.map((document) => ({ document, score: 1 }))));
  return `<|im_start|>user\n${role}: ${parts.join('\n')}<|im_end|>\n<|im_start|>assistant\n`;
}

function question(test: (q: SearchQuestion) => boolean): SearchQuestion {
  const found = kb.questions.find(test);
  if (!found) throw new Error('no such question in the knowledge base');
  return found;
}

function hop(q: SearchQuestion, index: number): NonNullable<SearchQuestion['steps']>[number] {
  const step = q.steps?.[index];
  if (!step) throw new Error(`"${q.question}" has no step ${index}`);
  return step;
}

const bornIn = question((q) => q.question.startsWith('Where was ') && q.question.endsWith(' born?'));
const countryOfBirth = question((q) => q.dataSource === KB_TWO_HOP && q.question.startsWith('In which country was '));
const river = question((q) => q.question.startsWith('On which river does '));
const unrelated = kb.documents.find((d) => !bornIn.supportingDocIds.includes(d.id) && !countryOfBirth.supportingDocIds.includes(d.id))!;

describe('search teacher', () => {
  test('single hop: search the entity and relation, then verify yes and answer from the information', () => {
    const step = hop(bornIn, 0);
    const found = [{ query: step.query, docs: [documents.get(step.docId)!, unrelated] }];
    expect(teacher(prompt('Verify', bornIn))).toBe('<verify>no</verify>');
    expect(teacher(prompt('Search', bornIn))).toBe(`<search>${step.query}</search>`);
    expect(step.query).toMatch(/ born$/);
    expect(teacher(prompt('Verify', bornIn, found))).toBe('<verify>yes</verify>');
    expect(teacher(prompt('Answer', bornIn, found))).toBe(`<answer>${bornIn.answers[0]}</answer>`);
  });

  test('single hop: information without the supporting document is not enough', () => {
    const missed = [{ query: 'something else', docs: [unrelated] }];
    expect(teacher(prompt('Verify', bornIn, missed))).toBe('<verify>no</verify>');
    expect(teacher(prompt('Search', bornIn, missed))).toBe(`<search>${hop(bornIn, 0).query}</search>`);
  });

  test('two hops: the second query names the bridge entity read from the first document', () => {
    const [first, second] = [hop(countryOfBirth, 0), hop(countryOfBirth, 1)];
    const hop1 = { query: first.query, docs: [documents.get(first.docId)!, unrelated] };
    const hop2 = { query: second.query, docs: [documents.get(second.docId)!] };
    expect(teacher(prompt('Search', countryOfBirth))).toBe(`<search>${first.query}</search>`);
    expect(teacher(prompt('Verify', countryOfBirth, [hop1]))).toBe('<verify>no</verify>');
    const query = teacher(prompt('Search', countryOfBirth, [hop1]));
    expect(query).toBe(`<search>${first.finds} country</search>`);
    expect(formatInformation([{ document: documents.get(first.docId)!, score: 1 }])).toContain(first.finds);
    expect(teacher(prompt('Verify', countryOfBirth, [hop1, hop2]))).toBe('<verify>yes</verify>');
    expect(teacher(prompt('Answer', countryOfBirth, [hop1, hop2]))).toBe(`<answer>${countryOfBirth.answers[0]}</answer>`);
  });

  test('the answer is a golden answer spelled as in the information; unknown when it is missing', () => {
    const step = hop(river, 0);
    const answer = teacher(prompt('Answer', river, [{ query: step.query, docs: [documents.get(step.docId)!] }]));
    expect(river.answers.map((a) => `<answer>${a}</answer>`)).toContain(answer);
    expect(teacher(prompt('Answer', river))).toBe('<answer>unknown</answer>');
  });

  test('a prompt naming no known question gets a refusal, not a guess', () => {
    expect(teacher('<|im_start|>user\nVerify: Question: Who is nobody?<|im_end|>\n')).toBe('I cannot read the question.');
  });
});
