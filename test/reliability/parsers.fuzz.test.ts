// Seeded fuzzing of every parser of model output and user input: counts exceptions (a DrmasError a parser documents
// for bad input is handled; any other is a failure), inputs slower than 200 ms of CPU time, and results that break an
// invariant needing no oracle. Quick part: 300 inputs per parser (npm test); slow part: 10,000 more
// (DRMAS_SLOW_TESTS=1).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  coerceOverride,
  containsCjk,
  debateTranscriptSchema,
  DrmasError,
  exactMatch,
  extractBoxedAnswer,
  finalAnswerSection,
  hasBoxCommand,
  normalizeAnswer,
  parseOverride,
  parseTaggedOutput,
  parseTranscript,
  readBraceGroup,
  splitThink,
  tokenF1,
  z,
  type OutputFormat,
} from '@drmas/core';
import {
  checkArithmeticClaims,
  extractVerifierVerdict,
  latexToMathjs,
  mathAnswerFormat,
  mathAnswersEqual,
  normalizeMathAnswer,
  parseExactNumber,
  scoreMathResponse,
  symbolicallyEqual,
} from '@drmas/plugin-env-math';
import {
  ENGLISH_STOPWORDS,
  extractLastAnswer,
  parseCorpusRecord,
  parseQaRecord,
  parseRetrieveRequest,
  parseSearchAction,
  parseVerifierDecision,
  readRetrieveResponse,
  Tokenizer,
} from '@drmas/plugin-env-search';
import { toByteLevel } from '../../models/src/tokenizer/byteLevel.js';
import { buildNormalizer, buildPreTokenizer } from '../../models/src/tokenizer/preTokenize.js';
import { compileTokenizerRegex } from '../../models/src/tokenizer/regexTranslation.js';
import { DEFAULT_JUDGE_WEIGHTS, judgeDebate, parseVerdict } from '@drmas/plugin-env-debate';
import { describeSlow } from '../support/describeSlow.js';
import { recordFigures, type ReliabilityFigure } from './support/figures.js';
import { ParserFuzzInputs } from './support/parserFuzzInputs.js';

const QUICK_CASES = 300;
const SLOW_CASES = 10_000;
const SLOW_MS = 200;
/**
 * A linear parser's CPU time grows with its input (about 1.3 ms per KB for the ByteLevel pre-tokenizer on a loaded
 * machine), so the budget does too: 1 ms more per 1,000 characters. A quadratic one is far past it (the URL redaction
 * that this suite caught took 2 s on 110 KB).
 */
const SLOW_MS_PER_KILOCHAR = 1;

/** One parser under fuzzing: how to draw an input, call it, and what its result must satisfy. */
interface Target<I, R> {
  parser: string;
  input(gen: ParserFuzzInputs): I;
  call(input: I): R;
  /** What is wrong with the result, or undefined. */
  check?(input: I, result: R): string | undefined;
  /** The DrmasError codes the parser documents for bad input. */
  rejects?: readonly string[];
}
const target = <I, R>(t: Target<I, R>) => t as unknown as Target<unknown, unknown>;

/** The first failure found when `cond` is false. */
const unless = (cond: boolean, why: string): string | undefined => (cond ? undefined : why);
const firstOf = (...checks: Array<() => string | undefined>): string | undefined => {
  for (const c of checks) {
    const why = c();
    if (why) return why;
  }
  return undefined;
};

/** The CJK ranges of the tag parser, read code point by code point (an independent reading of its regex). */
function hasCjkCodePoint(text: string): boolean {
  const ranges = [
    [0x3000, 0x303f],
    [0x3040, 0x30ff],
    [0x3400, 0x4dbf],
    [0x4e00, 0x9fff],
    [0xac00, 0xd7af],
    [0xf900, 0xfaff],
  ];
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (ranges.some(([lo, hi]) => cp >= lo! && cp <= hi!)) return true;
  }
  return false;
}

/** `s` with A-Z lower-cased and nothing else changed (so offsets stay those of `s`). */
const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/**
 * Whether `content` stands in `text` itself right after an opening `<tag>` and before a closing `</tag>` (tag names in
 * any ASCII case), with only whitespace between: where a parser that cut the text at wrong offsets would fail. An
 * allowed value is compared in lower case, as the parser gives it.
 */
function standsBetweenTags(text: string, tag: string, content: string, lowerCased: boolean): boolean {
  const lower = asciiLower(text);
  const skipSpaces = (i: number) => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    return i;
  };
  for (let open = lower.indexOf(`<${tag}>`); open >= 0; open = lower.indexOf(`<${tag}>`, open + 1)) {
    const start = skipSpaces(open + tag.length + 2);
    if ((lowerCased ? lower : text).startsWith(content, start) && lower.startsWith(`</${tag}>`, skipSpaces(start + content.length)))
      return true;
  }
  return false;
}

function commonPrefix(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

function commonSuffix(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[a.length - 1 - n] === b[b.length - 1 - n]) n++;
  return n;
}

function gcd(a: bigint, b: bigint): bigint {
  if (a < 0n) a = -a;
  while (b) [a, b] = [b, a % b];
  return a;
}

/** A number-like answer: plain, signed, decimal, with separators, as a fraction, or of many digits. */
function numberLike(gen: ParserFuzzInputs): string {
  const digits = () => String(gen.int(1000)).repeat(1 + (gen.int(8) === 0 ? gen.int(500) : 0));
  switch (gen.int(6)) {
    case 0:
      return `${gen.pick(['', '-', '+'])}${digits()}`;
    case 1:
      return `${gen.pick(['', '-'])}${digits()}.${digits()}`;
    case 2:
      return `\\frac{${digits()}}{${digits()}}`;
    case 3:
      return `${digits()}/${digits()}`;
    case 4:
      return `1,${gen.pick(['000', '00', '0000'])},000`;
    default:
      return gen.text();
  }
}

/** `a` changed a little: same, respaced, a digit changed, wrapped in a box or a tuple, or something else. */
function variant(gen: ParserFuzzInputs, a: string): string {
  switch (gen.int(6)) {
    case 0:
      return a;
    case 1:
      return ` ${a.replace(/,/g, ', ')} `;
    case 2:
      return a.replace(/\d/, (d) => String((Number(d) + 1) % 10));
    case 3:
      return `\\boxed{${a}}`;
    case 4:
      return `(${a},${a})`;
    default:
      return numberLike(gen);
  }
}

const REGEX_PIECES = [
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  '?',
  '*',
  '+',
  '\\',
  '\\p{L}',
  '\\x{',
  '\\x41',
  '-',
  '^',
  '$',
  '|',
  '(?i:',
  '(?-i)',
  '(?i)',
  'a',
  'ß',
  'İ',
  '\\s',
  '.',
  "'s",
  '\ud83d',
  '{2,3}',
  '(?=',
  '(?<',
];
const FORMATS: OutputFormat[] = [
  { tag: 'answer' },
  { tag: 'verify', values: ['approve', 'reject'] },
  { tag: 'boxed' },
  { tag: 'answer', requireThink: true },
  { tag: 'search' },
];
const RETRIEVE_LIMITS = { defaultTopk: 3, maxTopk: 50, maxQueries: 64 };
const QWEN2 =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const byteLevel = buildPreTokenizer({ type: 'ByteLevel', add_prefix_space: false, use_regex: true })!;
const qwenSplit = buildPreTokenizer({ type: 'Split', pattern: { Regex: QWEN2 }, behavior: 'Isolated' })!;
const whitespace = buildPreTokenizer({ type: 'Whitespace' })!;
const digitsAndPunctuation = buildPreTokenizer({
  type: 'Sequence',
  pretokenizers: [
    { type: 'Digits', individual_digits: true },
    { type: 'Punctuation', behavior: 'Isolated' },
  ],
})!;
const normalizer = buildNormalizer({
  type: 'Sequence',
  normalizers: [{ type: 'NFKC' }, { type: 'Replace', pattern: { Regex: '\\s+' }, content: '▁' }, { type: 'Lowercase' }],
})!;
const retrievalTokenizer = new Tokenizer();
const OVERRIDE_SCHEMAS = [
  undefined,
  z.object({ x: z.number() }),
  z.object({ x: z.boolean() }),
  z.object({ x: z.array(z.number()) }),
  z.object({ x: z.object({}) }),
];

const TARGETS = [
  // orchestra
  target({
    parser: 'parseTaggedOutput',
    input: (gen) => ({ text: gen.text(), format: gen.pick(FORMATS), finish: gen.pick([undefined, 'stop', 'length'] as const) }),
    call: ({ text, format, finish }) => parseTaggedOutput(text, format, finish),
    check: ({ text, format, finish }, r) => {
      if (!r.valid) {
        return firstOf(
          () => unless(typeof r.reason === 'string' && r.reason.length > 0, 'invalid without a reason'),
          () => unless(finish !== 'length' || r.reason!.endsWith('(cut at maxNewTokens)'), 'a cut output not noted'),
        );
      }
      // The action is read outside the <think> block (splitThink, fuzzed on its own below).
      const think = splitThink(text);
      const outside = 'outside' in think ? think.outside : text;
      const content = r.action?.content ?? '';
      const tag = format.tag.toLowerCase();
      return firstOf(
        () => unless(r.action?.tag === tag, `action tag ${r.action?.tag}`),
        () => unless(content.length > 0 && content === content.trim(), 'empty or untrimmed content'),
        () => unless(!format.values || format.values.includes(content), 'a value outside the allowed ones'),
        () =>
          unless(
            tag === 'boxed' ? outside.includes(content) : standsBetweenTags(outside, tag, content, format.values !== undefined),
            `content ${shorten(content)} is not between the tags`,
          ),
        () => unless(!hasCjkCodePoint(text), 'valid with CJK characters'),
      );
    },
  }),
  target({
    parser: 'splitThink',
    input: (gen) => ({ text: gen.text(), required: gen.int(2) === 0 }),
    call: ({ text, required }) => splitThink(text, required),
    check: ({ text }, r) => {
      if ('reason' in r) return unless(r.reason.length > 0, 'no reason');
      const removed = text.length - r.outside.length;
      if (removed === 0) return unless(r.outside === text, 'outside is not the text');
      // Where the text and outside part, a whole <think>...</think> block of the text was cut out.
      const from = Math.max(0, r.outside.length - commonSuffix(text, r.outside));
      const to = Math.min(commonPrefix(text, r.outside), r.outside.length);
      for (let i = from; i <= to; i++) {
        if (text[i] === '<' && /^<think>[\s\S]*<\/think>$/i.test(text.slice(i, i + removed))) return undefined;
      }
      return 'outside is not the text less one <think> block';
    },
  }),
  target({
    parser: 'containsCjk',
    input: (gen) => gen.text(),
    call: (text) => containsCjk(text),
    check: (text, r) => unless(r === hasCjkCodePoint(text), 'disagrees with a code point reading'),
  }),

  // env-math
  target({
    parser: 'checkArithmeticClaims',
    input: (gen) => gen.text(),
    call: (text) => checkArithmeticClaims(text),
    check: (text, r) =>
      unless(
        Number.isInteger(r.claims) && r.false >= 0 && r.false <= r.claims && r.claims <= text.split('=').length - 1,
        `${r.claims} claims, ${r.false} false`,
      ),
  }),
  target({
    parser: 'extractBoxedAnswer',
    input: (gen) => gen.text(),
    call: (text) => extractBoxedAnswer(text),
    check: (text, r) => unless(r === undefined || (text.includes(r) && r === r.trim()), 'answer not in the text or untrimmed'),
  }),
  target({
    parser: 'finalAnswerSection',
    input: (gen) => gen.text(),
    call: (text) => finalAnswerSection(text),
    check: (text, r) => unless(text.endsWith(r) && !r.includes('</think>'), 'not the text after the last </think>'),
  }),
  target({
    parser: 'readBraceGroup',
    input: (gen) => {
      const text = gen.text();
      const opens = [...text.matchAll(/\{/g)].map((m) => m.index);
      return { text, open: opens.length ? gen.pick(opens) : 0 };
    },
    call: ({ text, open }) => readBraceGroup(text, open),
    check: ({ text, open }, r) => {
      if (!r || text[open] !== '{') return undefined;
      let depth = 0;
      let balanced = true;
      for (let i = 0; i < r.content.length; i++) {
        if (r.content[i] === '\\') i++;
        else if (r.content[i] === '{') depth++;
        else if (r.content[i] === '}' && --depth < 0) balanced = false;
      }
      return firstOf(
        () => unless(text[r.end - 1] === '}' && r.content === text.slice(open + 1, r.end - 1), 'not the text between the braces'),
        () => unless(balanced && depth === 0, 'content braces unbalanced'),
      );
    },
  }),
  target({
    parser: 'hasBoxCommand',
    input: (gen) => gen.text(),
    call: (text) => hasBoxCommand(text),
    check: (text, r) => unless(r || extractBoxedAnswer(text) === undefined, 'an answer was boxed without a box command'),
  }),
  target({
    parser: 'normalizeMathAnswer',
    input: (gen) => (gen.int(2) === 0 ? gen.text() : numberLike(gen)),
    call: (text) => normalizeMathAnswer(text),
    check: (_, r) => unless(typeof r === 'string' && !/\s/.test(r), 'whitespace left in a normalized answer'),
  }),
  target({
    parser: 'parseExactNumber',
    input: (gen) => normalizeMathAnswer(numberLike(gen)),
    call: (text) => parseExactNumber(text),
    check: (_, r) => unless(r === undefined || (r.den > 0n && gcd(r.num, r.den) === 1n), 'not in lowest terms with a positive denominator'),
  }),
  target({
    parser: 'mathAnswersEqual',
    input: (gen) => {
      const a = gen.int(2) === 0 ? gen.text() : numberLike(gen);
      return { a, b: variant(gen, a) };
    },
    call: ({ a, b }) => mathAnswersEqual(a, b),
    check: ({ a, b }, r) =>
      firstOf(
        () => unless(r === mathAnswersEqual(b, a), 'not symmetric'),
        () => unless(normalizeMathAnswer(a) === '' || mathAnswersEqual(a, a), 'an answer is not equal to itself'),
      ),
  }),
  target({
    parser: 'latexToMathjs',
    input: (gen) => gen.text(),
    call: (text) => latexToMathjs(text),
    check: (_, r) => unless(r === undefined || !/[\\{}]/.test(r), 'a command or brace left in mathjs syntax'),
  }),
  target({
    parser: 'symbolicallyEqual',
    input: (gen) => {
      const a = gen.pick(['x+1', '\\frac{x}{2}', '2x', '\\sqrt{x}', '\\pi', 'x^2', '(x+1)^2', gen.text(), gen.fragments(gen.int(8))]);
      const b = gen.int(2) === 0 ? `${a}+0` : gen.pick(['1+x', '\\frac{1}{2}x', 'x\\cdot2', gen.text()]);
      // Symmetry is checked on a quarter of the inputs: mathjs's simplify takes some 10 ms a call.
      return { a, b, symmetry: gen.int(4) === 0 };
    },
    call: ({ a, b }) => symbolicallyEqual(a, b),
    check: ({ a, b, symmetry }, r) => unless(!symmetry || r === symbolicallyEqual(b, a), 'not symmetric'),
  }),
  target({
    parser: 'extractVerifierVerdict',
    input: (gen) => gen.text(),
    call: (text) => extractVerifierVerdict(text),
    check: (text, r) => unless(r === undefined || text.toLowerCase().includes(r), 'a verdict the text does not hold'),
  }),
  target({
    parser: 'scoreMathResponse',
    input: (gen) => ({ text: gen.text(), truth: numberLike(gen) }),
    call: ({ text, truth }) => scoreMathResponse(text, truth),
    check: ({ text }, r) =>
      firstOf(
        () => unless(['correct', 'wrong', 'no_boxed', 'truncated'].includes(r.reason), `reason ${r.reason}`),
        () => unless(r.correct === (r.reason === 'correct'), 'correct and reason disagree'),
        () => unless(r.extracted === extractBoxedAnswer(text), 'extracted is not the boxed answer'),
      ),
  }),

  // env-search
  target({
    parser: 'extractLastAnswer',
    input: (gen) => gen.text(),
    call: (text) => extractLastAnswer(text),
    check: (text, r) =>
      unless(r === undefined || (text.includes(r) && text.includes('</answer>') && r === r.trim()), 'answer not in the text'),
  }),
  target({
    parser: 'parseSearchAction',
    input: (gen) => gen.text(),
    call: (text) => parseSearchAction(text),
    check: (text, r) =>
      r.type === 'invalid'
        ? undefined
        : unless(text.includes(`</${r.type}>`) && text.includes(r.type === 'search' ? r.query : r.answer), 'action not in the text'),
  }),
  target({
    parser: 'parseVerifierDecision',
    input: (gen) => gen.text(),
    call: (text) => parseVerifierDecision(text),
    check: (text, r) => unless(r === undefined || text.toLowerCase().includes(r ? 'yes' : 'no'), 'a decision the text does not hold'),
  }),
  target({
    parser: 'normalizeAnswer',
    input: (gen) => gen.text(),
    call: (text) => normalizeAnswer(text),
    check: (_, r) =>
      firstOf(
        () => unless(!/^\s|\s$|\s\s|[^\S ]/.test(r), 'whitespace not collapsed'),
        () => unless(normalizeAnswer(r) === r, 'not idempotent'),
      ),
  }),
  target({
    parser: 'tokenF1',
    input: (gen) => ({ a: gen.text(), b: gen.int(2) === 0 ? gen.text() : gen.fragments(gen.int(5)) }),
    call: ({ a, b }) => tokenF1(a, b),
    check: ({ a, b }, r) =>
      firstOf(
        () => unless(r >= 0 && r <= 1, `F1 ${r}`),
        () => unless(Math.abs(r - tokenF1(b, a)) < 1e-12, 'not symmetric'),
        () => unless(tokenF1(a, a) === 1, 'an answer is not a perfect match of itself'),
      ),
  }),
  target({
    parser: 'exactMatch',
    input: (gen) => ({ prediction: gen.text(), goldens: Array.from({ length: gen.int(4) }, () => gen.text()) }),
    call: ({ prediction, goldens }) => exactMatch(prediction, goldens),
    check: ({ prediction, goldens }, r) =>
      unless((r === 0 || r === 1) && exactMatch(prediction, [...goldens, prediction]) === 1, 'no match with itself'),
  }),
  target({
    parser: 'Tokenizer.tokenize',
    input: (gen) => gen.text(),
    call: (text) => retrievalTokenizer.tokenize(text),
    check: (_, r) =>
      unless(
        r.every((t) => /^[\p{L}\p{N}]+$/u.test(t) && !ENGLISH_STOPWORDS.has(t)),
        'a token with a separator or a stop word',
      ),
  }),
  target({
    parser: 'parseRetrieveRequest',
    input: (gen) => (gen.int(4) === 0 ? gen.json() : gen.object()),
    call: (body) => parseRetrieveRequest(body, RETRIEVE_LIMITS),
    rejects: ['INVALID_ARGUMENT'],
    check: (_, r) =>
      unless(
        r.queries.every((q) => typeof q === 'string') &&
          r.queries.length <= RETRIEVE_LIMITS.maxQueries &&
          Number.isInteger(r.topk) &&
          r.topk >= 1 &&
          r.topk <= RETRIEVE_LIMITS.maxTopk &&
          typeof r.returnScores === 'boolean',
        'a request outside the limits',
      ),
  }),
  target({
    parser: 'readRetrieveResponse',
    input: (gen) => ({ body: gen.int(4) === 0 ? gen.json() : gen.object(), count: gen.int(4) }),
    call: ({ body, count }) => readRetrieveResponse(body, count),
    check: ({ count }, r) =>
      typeof r === 'string'
        ? undefined
        : unless(
            r.length === count &&
              r.every((hits) => hits.every((h) => typeof h.document.id === 'string' && typeof h.document.contents === 'string')),
            'hits of the wrong shape',
          ),
  }),
  target({
    parser: 'parseQaRecord',
    input: (gen) => gen.object(),
    call: (record) => parseQaRecord(record, 'qa.jsonl', 1),
    rejects: ['DATASET_INVALID'],
    check: (_, r) =>
      unless(
        r.question.length > 0 && r.question === r.question.trim() && r.answers.length > 0 && r.answers.every((a) => typeof a === 'string'),
        'a malformed question',
      ),
  }),
  target({
    parser: 'parseCorpusRecord',
    input: (gen) => gen.object(),
    call: (record) => parseCorpusRecord(record, 'corpus.jsonl', 1),
    rejects: ['DATASET_INVALID'],
    check: (_, r) => unless(typeof r.id === 'string' && typeof r.contents === 'string', 'a malformed document'),
  }),

  // core
  target({
    parser: 'parseOverride',
    input: (gen) => (gen.int(2) === 0 ? gen.text() : `${gen.pick(['trainer.steps', 'a.b.c', ' x ', 'a..b', '.a', ''])}=${gen.text()}`),
    call: (text) => parseOverride(text),
    rejects: ['CONFIG_OVERRIDE_INVALID'],
    check: (text, r) => {
      const eq = text.indexOf('=');
      return unless(
        r.path.join('.') === text.slice(0, eq).trim() && r.raw === text.slice(eq + 1),
        'key or value not where the text has them',
      );
    },
  }),
  target({
    parser: 'coerceOverride',
    input: (gen) => ({ raw: gen.int(2) === 0 ? gen.text() : numberLike(gen), schema: gen.pick(OVERRIDE_SCHEMAS) }),
    call: ({ raw, schema }) => coerceOverride({ path: ['x'], raw, text: `x=${raw}` }, schema),
    rejects: ['CONFIG_OVERRIDE_INVALID'],
  }),

  // models tokenizer
  target({
    parser: 'preTokenize ByteLevel',
    input: (gen) => gen.text(),
    call: (text) => byteLevel([text]),
    check: (text, r) => unless(r.join('') === toByteLevel(text), 'pieces do not make up the text'),
  }),
  target({
    parser: 'preTokenize Qwen2 split',
    input: (gen) => gen.text(),
    call: (text) => qwenSplit([text]),
    check: (text, r) => unless(r.join('') === text && r.every((p) => p.length > 0), 'pieces do not make up the text'),
  }),
  target({
    parser: 'preTokenize Whitespace',
    input: (gen) => gen.text(),
    call: (text) => whitespace([text]),
    check: (_, r) =>
      unless(
        r.every((p) => p.length > 0 && !/\s/u.test(p)),
        'an empty piece or one with whitespace',
      ),
  }),
  target({
    parser: 'preTokenize Digits, Punctuation',
    input: (gen) => gen.text(),
    call: (text) => digitsAndPunctuation([text]),
    check: (text, r) => unless(r.join('') === text, 'pieces do not make up the text'),
  }),
  target({
    parser: 'normalizer NFKC, Replace, Lowercase',
    input: (gen) => gen.text(),
    call: (text) => normalizer(text),
  }),
  target({
    parser: 'compileTokenizerRegex',
    input: (gen) => (gen.int(3) === 0 ? gen.text() : Array.from({ length: gen.int(16) }, () => gen.pick(REGEX_PIECES)).join('')),
    call: (pattern) => compileTokenizerRegex(pattern),
    rejects: ['TOKENIZER_INVALID'],
    check: (_, r) => unless(r instanceof RegExp && r.flags === 'gu', 'not a global unicode RegExp'),
  }),
  target({
    parser: 'parseVerdict',
    input: (gen) => {
      const debaters = gen.pick([
        ['pro', 'con'],
        ['alice', 'bob', 'carol'],
        ['a1', 'b_2'],
      ]);
      const name = gen.pick([...debaters, debaters[0]!.toUpperCase(), ` ${debaters[1]} `, 'judge', gen.text()]);
      const verdict = gen.pick([`<verdict>${name}</verdict>`, `<VERDICT>${name}</verdict>`, `<verdict>${name}`, '']);
      return {
        text: gen.pick([verdict, `${gen.text()}${verdict}`, `<think>${gen.text()}</think>${verdict}${gen.text()}`, gen.text()]),
        debaters,
      };
    },
    call: ({ text, debaters }) => parseVerdict(text, debaters),
    check: ({ text, debaters }, r) =>
      r.valid
        ? firstOf(
            () => unless(debaters.includes(r.winner), `winner ${r.winner} is no debater`),
            () => unless(standsBetweenTags(text, 'verdict', r.winner, true), `winner ${r.winner} is not between the tags`),
            () => unless(!hasCjkCodePoint(text), 'valid with CJK characters'),
          )
        : unless(r.reason.length > 0, 'invalid without a reason'),
  }),
  target({
    parser: 'parseTranscript',
    input: (gen) =>
      gen.pick([
        () => gen.text(),
        () => JSON.stringify(gen.json()),
        () => JSON.stringify({ debaters: ['pro', 'con'], turns: [{ agent: gen.text(), round: gen.int(3), text: gen.text() }] }),
      ])(),
    call: (content) => parseTranscript(content),
    check: (_, r) => unless(r === undefined || debateTranscriptSchema.safeParse(r).success, 'a transcript the schema refuses'),
  }),
  target({
    parser: 'judgeDebate',
    input: (gen) => {
      const debaters = gen.pick([
        ['pro', 'con'],
        ['a', 'b', 'c'],
      ]);
      const turnText = () =>
        gen.pick([
          gen.text(),
          `${gen.text()} \\boxed{${numberLike(gen)}}`,
          `Because ${gen.text()}. For example, 3. \\boxed{${numberLike(gen)}}`,
        ]);
      const turns = Array.from({ length: gen.int(7) }, (_, i) => ({
        agent: gen.pick(debaters),
        round: 1 + Math.floor(i / 2),
        text: turnText(),
      }));
      const judge = gen.pick([undefined, `<verdict>${gen.pick(debaters)}</verdict>`, gen.text()]);
      return {
        transcript: { debaters, turns, ...(judge !== undefined ? { judge } : {}) },
        reference: gen.pick([undefined, numberLike(gen)]),
        reward: gen.pick(['win', 'score'] as const),
      };
    },
    call: ({ transcript, reference, reward }) =>
      judgeDebate(transcript, reference, { reward, weights: DEFAULT_JUDGE_WEIGHTS, answers: mathAnswerFormat }),
    check: ({ transcript, reward }, r) => {
      const rewards = [...r.rewards.values()];
      const debaterSum = transcript.debaters.reduce((sum, d) => sum + r.rewards.get(d)!, 0);
      return firstOf(
        () =>
          unless(
            rewards.every((x) => Number.isFinite(x) && x >= 0 && x <= 1),
            `a reward outside [0, 1]: ${rewards.join(', ')}`,
          ),
        () => unless(r.outcome >= 0 && r.outcome <= 1, `outcome ${r.outcome}`),
        () =>
          unless(
            r.winners.every((w) => transcript.debaters.includes(w)),
            'a winner who is no debater',
          ),
        // Win/loss shares one win among the winners; no winner (an invalid verdict) gives nobody anything.
        () =>
          unless(
            (reward === 'score' && !r.verdict) || Math.abs(debaterSum - (r.winners.length > 0 ? 1 : 0)) < 1e-9,
            `win rewards sum to ${debaterSum}`,
          ),
      );
    },
  }),
];

interface Tally {
  cases: number;
  passed: number;
  exceptions: number;
  slow: number;
  slowestMs: number;
  /** The first few failures, input shortened. */
  failures: string[];
}

const tallies = new Map<string, Tally>(
  TARGETS.map((t) => [t.parser, { cases: 0, passed: 0, exceptions: 0, slow: 0, slowestMs: 0, failures: [] }]),
);

const asJson = (input: unknown): string =>
  JSON.stringify(input, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v)) ?? String(input);
const inputLength = (input: unknown): number => (typeof input === 'string' ? input.length : asJson(input).length);
const shorten = (input: unknown): string => {
  const json = asJson(input);
  return json.length > 200 ? `${json.slice(0, 200)}... (${json.length} characters)` : json;
};

/**
 * Runs `call` and measures the CPU time it took: the machines these tests run on are shared, and wall time there
 * measures the other jobs as much as the parser.
 */
function timed(call: () => unknown): { ms: number; result?: unknown; error?: unknown } {
  const started = process.cpuUsage();
  const ms = () => {
    const used = process.cpuUsage(started);
    return (used.user + used.system) / 1000;
  };
  try {
    const result = call();
    return { ms: ms(), result };
  } catch (error) {
    return { ms: ms(), error };
  }
}

/** Runs `cases` inputs of one parser; an input over its budget (SLOW_MS, more for long inputs) is run again and counts as slow when over both times. */
function fuzz(t: Target<unknown, unknown>, seed: number, cases: number, maxRepeat: number): Tally {
  const tally = tallies.get(t.parser)!;
  const gen = new ParserFuzzInputs(seed, { maxRepeat });
  for (let n = 0; n < cases; n++) {
    const input = t.input(gen);
    let run = timed(() => t.call(input));
    let budgetMs = SLOW_MS;
    if (run.ms > budgetMs) {
      budgetMs += (inputLength(input) / 1000) * SLOW_MS_PER_KILOCHAR;
      const again = timed(() => t.call(input));
      if (again.ms < run.ms) run = again;
    }
    tally.cases++;
    tally.slowestMs = Math.max(tally.slowestMs, run.ms);
    let failure: string | undefined;
    if (run.error !== undefined) {
      const handled = DrmasError.is(run.error) && (t.rejects ?? []).includes(run.error.code);
      if (!handled) {
        tally.exceptions++;
        const e = run.error as Error;
        failure = `threw ${e?.name}: ${String(e?.message).slice(0, 160)}`;
      }
    } else {
      failure = t.check?.(input, run.result);
    }
    if (!failure && run.ms > budgetMs) {
      tally.slow++;
      failure = `took ${run.ms.toFixed(0)} ms`;
    }
    if (failure) {
      if (tally.failures.length < 3) tally.failures.push(`${failure} on ${shorten(input)}`);
    } else {
      tally.passed++;
    }
  }
  return tally;
}

beforeAll(() => {
  // mathjs loads on the first symbolic comparison (about a second): not a parser's time.
  symbolicallyEqual('x+1', '1+x');
});

afterAll(() => {
  const figures: ReliabilityFigure[] = [...tallies].map(([parser, t]) => ({
    area: 'parsers',
    what: `${parser} fuzz`,
    cases: t.cases,
    passed: t.passed,
    counts: { exceptions: t.exceptions, slow: t.slow, 'slowest ms': Math.round(t.slowestMs) },
  }));
  recordFigures('parsers', figures);
});

describe(`parsers fuzz, ${QUICK_CASES} seeded inputs each`, () => {
  test.each(TARGETS.map((t) => [t.parser, t] as const))('%s', (_, t) => {
    const tally = fuzz(t, 0x5eed, QUICK_CASES, 2000);
    expect(tally.failures).toEqual([]);
    expect(tally.exceptions).toBe(0);
  });
});

describeSlow(`parsers fuzz, ${SLOW_CASES} more seeded inputs each`, () => {
  test.each(TARGETS.map((t) => [t.parser, t] as const))(
    '%s',
    (_, t) => {
      const before = { ...tallies.get(t.parser)!, failures: [...tallies.get(t.parser)!.failures] };
      const tally = fuzz(t, 0x51ee, SLOW_CASES, 20_000);
      expect(tally.failures.slice(before.failures.length)).toEqual([]);
      expect(tally.exceptions - before.exceptions).toBe(0);
      expect(tally.slow - before.slow).toBe(0);
    },
    600_000,
  );
});
