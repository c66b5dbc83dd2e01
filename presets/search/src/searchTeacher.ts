import { normalizeAnswer } from '@drmas/core';
import type { SearchDocument, SearchQuestion } from '@drmas/plugin-env-search';
import type { TeacherPolicy } from '@drmas/plugin-orchestra';

/** What the teacher reads from a knowledge base (`generateKnowledgeBase`): its questions and documents. */
export interface SearchTeacherKnowledge {
  questions: readonly SearchQuestion[];
  documents: readonly SearchDocument[];
}

/** One `Doc i(Title: T) text` line of the `<information>` blocks in a prompt. */
interface InformationLine {
  title: string;
  /** Normalised title and text, padded with spaces so whole-word phrases can be looked up. */
  normalized: string;
}

const ROLE = /\b(Verify|Search|Answer): Question: ([^\n<]*)/;
const INFORMATION = /<information>([\s\S]*?)<\/information>/g;
const DOC_LINE = /^Doc \d+\(Title: ([^)\n]*)\)(.*)$/;

function informationLines(prompt: string): InformationLine[] {
  const lines: InformationLine[] = [];
  for (const [, body] of prompt.matchAll(INFORMATION)) {
    // Group 1 is not optional, so every match has it.
    for (const line of body!.split('\n')) {
      const [, title, text] = DOC_LINE.exec(line.trim()) ?? [];
      if (title !== undefined) lines.push({ title: title.trim(), normalized: ` ${normalizeAnswer(`${title} ${text}`)} ` });
    }
  }
  return lines;
}

function mentions(line: InformationLine, phrase: string): boolean {
  const normalized = normalizeAnswer(phrase);
  return normalized !== '' && line.normalized.includes(` ${normalized} `);
}

/** The title of a document: the first line of its contents (as `formatInformation` shows it). */
function titleOf(document: SearchDocument): string {
  const newline = document.contents.indexOf('\n');
  return (newline < 0 ? document.contents : document.contents.slice(0, newline)).trim();
}

/**
 * The search teacher, on the preset's prompts (`Verify:`, `Search:`, `Answer:` then the observation):
 * - Verifier: `yes` once the information holds the document of the question's last hop with a golden answer in it
 *   (for two-hop questions, the second hop's document), else `no`.
 * - Searcher: the query of the first hop whose document is not in the information yet (entity name and relation,
 *   e.g. `Varnok Telli born`); the second hop's query names the bridge entity, which the first hop's document holds.
 * - Answerer: the golden answer as the information spells it.
 * Questions without solution steps (external data) fall back to: any document with a golden answer, and the
 * question as the query.
 */
export function searchTeacher(knowledge: SearchTeacherKnowledge): TeacherPolicy {
  const questions = new Map(knowledge.questions.map((q) => [q.question.trim(), q]));
  const titles = new Map(knowledge.documents.map((d) => [d.id, titleOf(d)]));
  const hopDone = (lines: InformationLine[], docId: string, finds?: string) => {
    const title = titles.get(docId);
    return lines.some((line) => line.title === title && (finds === undefined || mentions(line, finds)));
  };
  const goldenIn = (question: SearchQuestion, lines: InformationLine[]): string | undefined => {
    const last = question.steps?.at(-1);
    const candidates = last ? lines.filter((line) => line.title === titles.get(last.docId)) : lines;
    return question.answers.find((answer) => candidates.some((line) => mentions(line, answer)));
  };

  return (prompt) => {
    const [, role, questionText] = ROLE.exec(prompt) ?? [];
    const question = questionText === undefined ? undefined : questions.get(questionText.trim());
    if (!question) return 'I cannot read the question.';
    const lines = informationLines(prompt);
    const golden = goldenIn(question, lines);
    if (role === 'Verify') return `<verify>${golden === undefined ? 'no' : 'yes'}</verify>`;
    if (role === 'Answer') return `<answer>${golden ?? 'unknown'}</answer>`;
    const steps = question.steps ?? [];
    const next = steps.find((step) => !hopDone(lines, step.docId, step.finds)) ?? steps.at(-1);
    return `<search>${next?.query ?? question.question}</search>`;
  };
}
