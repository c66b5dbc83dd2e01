// drmas benchmark: every parser of model output and user input on adversarial inputs of 1 MiB (the worst shapes
// found for each), median of 5 rounds after a warm-up; prints a table and marks any median over 200 ms. Wall time
// is what the target is about; the CPU time of each call is printed beside it, since on a shared machine (see the
// load average printed) wall time also counts the other jobs.
// usage: npx tsc -b && node bench/parsers.mjs [--size CHARS] [--rounds N] [--only SUBSTRING]
// It imports the built `dist` of the packages (by package name, or by file for functions a package does not export).
import { loadavg } from 'node:os';
import {
  coerceOverride,
  containsCjk,
  exactMatch,
  extractBoxedAnswer,
  finalAnswerSection,
  hasBoxCommand,
  normalizeAnswer,
  parseOverride,
  parseTaggedOutput,
  readBraceGroup,
  splitThink,
  tokenF1,
} from '@drmas/core';
import {
  checkArithmeticClaims,
  extractVerifierVerdict,
  latexToMathjs,
  mathAnswersEqual,
  normalizeMathAnswer,
  parseExactNumber,
  scoreMathResponse,
  symbolicallyEqual,
} from '@drmas/plugin-env-math';
import {
  extractLastAnswer,
  parseCorpusRecord,
  parseQaRecord,
  parseRetrieveRequest,
  parseSearchAction,
  parseVerifierDecision,
  readRetrieveResponse,
  scoreSearchAnswer,
  Tokenizer,
} from '@drmas/plugin-env-search';
import { translateRegex } from '@drmas/models';
import { buildNormalizer, buildPreTokenizer } from '../models/dist/tokenizer/preTokenize.js';
import { compileTokenizerRegex } from '../models/dist/tokenizer/regexTranslation.js';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const SIZE = Number(option('size', 1 << 20));
const ROUNDS = Number(option('rounds', 5));
const ONLY = option('only', '');
const LIMIT_MS = 200;
/** A warm-up slower than this is reported alone: rounds of a quadratic parser at 1 MiB would take minutes. */
const GIVE_UP_MS = 5000;

/** `unit` repeated to exactly SIZE characters (the cut may split a surrogate pair: that is an input too). */
const rep = (unit, size = SIZE) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
/** As many whole copies of `unit` as fit in `size` characters. */
const whole = (unit, size) => unit.repeat(Math.floor(size / unit.length));
const half = (unit) => rep(unit, SIZE >> 1);
/** `open` k times, `middle`, `close` k times, SIZE characters in all. */
const nested = (open, middle, close) => {
  const k = Math.floor((SIZE - middle.length) / (open.length + close.length));
  return open.repeat(k) + middle + close.repeat(k);
};
/** Two inputs of a two-argument parser: `a` and its variant. */
const pair = (a, variant) => [a, variant(a)];
/** `count` pseudo-random decimal digits (Euclid's algorithm reduces 0.333... in three steps, random digits in many). */
const randomDigits = (count) => {
  let x = 12345;
  let out = '';
  for (let i = 0; i < count; i++) out += (x = (Math.imul(x, 1103515245) + 12345) >>> 0) % 10;
  return out;
};
/** x+y+x+y+... of `terms` terms: mathjs's simplify of a difference of two such sums takes exponential time. */
const alternating = (terms) => Array.from({ length: terms }, (_, i) => 'xy'[i % 2]).join('+');
const words = (count) => Array.from({ length: count }, (_, i) => `w${i.toString(36)}`).join(' ');

const answer = { tag: 'answer' };
const verify = { tag: 'verify', values: ['approve', 'reject'] };
const boxed = { tag: 'boxed' };
const limits = { defaultTopk: 3, maxTopk: 50, maxQueries: 1 << 20 };
const QWEN2 =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const byteLevel = buildPreTokenizer({ type: 'ByteLevel', add_prefix_space: false, use_regex: true });
const qwenSplit = buildPreTokenizer({
  type: 'Sequence',
  pretokenizers: [
    { type: 'Split', pattern: { Regex: QWEN2 }, behavior: 'Isolated' },
    { type: 'ByteLevel', add_prefix_space: false, use_regex: false },
  ],
});
const whitespace = buildPreTokenizer({ type: 'Whitespace' });
const digits = buildPreTokenizer({ type: 'Digits', individual_digits: false });
const punctuation = buildPreTokenizer({ type: 'Punctuation', behavior: 'Isolated' });
const normalizer = buildNormalizer({
  type: 'Sequence',
  normalizers: [{ type: 'NFKC' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }, { type: 'Lowercase' }],
});
const tokenizer = new Tokenizer();

/** [parser, shape, make input, run]: the worst shapes found for each parser. */
const CASES = [
  // orchestra tag parser
  ['parseTaggedOutput', '<answer> opens, no close', () => rep('<answer>'), (s) => parseTaggedOutput(s, answer)],
  ['parseTaggedOutput', '<answer>x</answer> pairs', () => rep('<answer>x</answer>'), (s) => parseTaggedOutput(s, answer)],
  [
    'parseTaggedOutput',
    '1 MiB inside <answer>',
    () => `<think>${half('a')}</think><answer>${half('b')}</answer>`,
    (s) => parseTaggedOutput(s, answer),
  ],
  ['parseTaggedOutput', 'İ and ß, then <answer>', () => `${rep('İß')}<answer>Paris</answer>`, (s) => parseTaggedOutput(s, answer)],
  ['parseTaggedOutput', 'uppercase <VERIFY> opens', () => rep('<VERIFY>'), (s) => parseTaggedOutput(s, verify)],
  ['parseTaggedOutput', '\\boxed{ opens (boxed format)', () => rep('\\boxed{'), (s) => parseTaggedOutput(s, boxed)],
  ['parseTaggedOutput', '"<" runs', () => rep('<'), (s) => parseTaggedOutput(s, answer)],
  ['splitThink', '<think> opens, no close', () => rep('<think>'), (s) => splitThink(s)],
  ['splitThink', 'one huge think block', () => `<think>${rep('x', SIZE - 20)}</think>`, (s) => splitThink(s, true)],
  ['splitThink', '"</think" fragments', () => rep('</think'), (s) => splitThink(s)],
  ['containsCjk', 'no CJK (full scan)', () => rep('abc İ 😀 '), (s) => containsCjk(s)],
  ['containsCjk', 'lone surrogates', () => rep('\ud83d'), (s) => containsCjk(s)],

  // env-math
  ['checkArithmeticClaims', '"1 + " chain, no "="', () => rep('1 + '), (s) => checkArithmeticClaims(s)],
  ['checkArithmeticClaims', 'true claims', () => rep('12+34=46, '), (s) => checkArithmeticClaims(s)],
  ['checkArithmeticClaims', '"1+1=" chain', () => rep('1+1='), (s) => checkArithmeticClaims(s)],
  ['checkArithmeticClaims', '"= 1 " chain', () => rep('= 1 '), (s) => checkArithmeticClaims(s)],
  ['checkArithmeticClaims', 'one 1 MiB digit run', () => rep('1234567890'), (s) => checkArithmeticClaims(s)],
  ['checkArithmeticClaims', '1 MiB sum claim', () => `${half('1')}+${rep('2', (SIZE >> 1) - 10)}=3`, (s) => checkArithmeticClaims(s)],
  ['checkArithmeticClaims', '"9*" product claim', () => `${rep('9*', SIZE - 2)}9=1`, (s) => checkArithmeticClaims(s)],
  ['checkArithmeticClaims', '"99 * " products, bad lookahead', () => `${rep('99 * ', SIZE - 8)}99=1.5`, (s) => checkArithmeticClaims(s)],
  ['extractBoxedAnswer', '\\boxed{ opens', () => rep('\\boxed{'), (s) => extractBoxedAnswer(s)],
  ['extractBoxedAnswer', '\\boxed then "{" runs', () => `\\boxed${rep('{', SIZE - 6)}`, (s) => extractBoxedAnswer(s)],
  ['extractBoxedAnswer', '\\boxedx (longer names)', () => rep('\\boxedx'), (s) => extractBoxedAnswer(s)],
  ['extractBoxedAnswer', '\\boxed and a 1 MiB token', () => `\\boxed ${rep('x', SIZE - 7)}`, (s) => extractBoxedAnswer(s)],
  ['extractBoxedAnswer', '</think> runs', () => rep('</think>'), (s) => extractBoxedAnswer(s)],
  ['extractBoxedAnswer', 'backslash runs', () => rep('\\'), (s) => extractBoxedAnswer(s)],
  ['finalAnswerSection', '</think> runs', () => rep('</think>'), (s) => finalAnswerSection(s)],
  ['finalAnswerSection', '"</think" fragments', () => rep('</think'), (s) => finalAnswerSection(s)],
  ['readBraceGroup', '"{" runs', () => rep('{'), (s) => readBraceGroup(s, 0)],
  ['readBraceGroup', 'escaped braces', () => `{${rep('\\{', SIZE - 2)}}`, (s) => readBraceGroup(s, 0)],
  ['hasBoxCommand', '\\boxeda (longer names)', () => rep('\\boxeda'), (s) => hasBoxCommand(s)],
  ['hasBoxCommand', '\\fbo fragments', () => rep('\\fbo'), (s) => hasBoxCommand(s)],
  ['normalizeMathAnswer', '"1\\text{a}" units', () => rep('1\\text{a}'), (s) => normalizeMathAnswer(s)],
  ['normalizeMathAnswer', '"\\text{ }" runs', () => rep('\\text{ }'), (s) => normalizeMathAnswer(s)],
  ['normalizeMathAnswer', '\\text{ opens', () => rep('\\text{'), (s) => normalizeMathAnswer(s)],
  ['normalizeMathAnswer', '\\frac{ opens', () => rep('\\frac{'), (s) => normalizeMathAnswer(s)],
  ['normalizeMathAnswer', '"^ " and whitespace', () => rep('^     '), (s) => normalizeMathAnswer(s)],
  ['normalizeMathAnswer', '\\boxed{digits}', () => `\\boxed{${rep('1', SIZE - 8)}}`, (s) => normalizeMathAnswer(s)],
  ['parseExactNumber', '1 MiB integer', () => rep('7'), (s) => parseExactNumber(s)],
  ['parseExactNumber', '1 MiB decimal of random digits', () => `0.${randomDigits(SIZE - 2)}`, (s) => parseExactNumber(s)],
  ['parseExactNumber', 'decimal at the digit cap', () => `0.${randomDigits(999)}`, (s) => parseExactNumber(s)],
  ['parseExactNumber', '"1,000,000,..."', () => `1${rep(',000', SIZE - 1)}`, (s) => parseExactNumber(s)],
  ['parseExactNumber', '\\frac of two halves', () => `\\frac{${half('7')}}{${rep('3', (SIZE >> 1) - 10)}}`, (s) => parseExactNumber(s)],
  [
    'mathAnswersEqual',
    'nested tuples "(1,(1,..."',
    () => pair(nested('(1,', '1', ')'), (s) => `${s.slice(0, -1)}2`),
    (p) => mathAnswersEqual(...p),
  ],
  [
    'mathAnswersEqual',
    'decimals differing at the end',
    () => pair(`0.${randomDigits(SIZE - 2)}`, (s) => `${s}4`),
    (p) => mathAnswersEqual(...p),
  ],
  [
    'mathAnswersEqual',
    'nested tuples at the length cap',
    () => pair(nested('(1,', '1', ')').slice(-9999), (s) => `${s.slice(0, -1)}2`),
    (p) => mathAnswersEqual(...p),
  ],
  ['mathAnswersEqual', 'flat tuple at the length cap', () => pair(rep('1.,', 9999), (s) => `${s}2`), (p) => mathAnswersEqual(...p)],
  ['mathAnswersEqual', 'flat tuple of 1 MiB', () => pair(rep('1,'), (s) => `${s}2`), (p) => mathAnswersEqual(...p)],
  ['mathAnswersEqual', 'sum of x', () => pair(`${rep('x+', SIZE - 1)}x`, (s) => `${s}+y`), (p) => mathAnswersEqual(...p)],
  ['latexToMathjs', 'nested \\frac', () => nested('\\frac{', '1', '}{2}'), (s) => latexToMathjs(s)],
  ['latexToMathjs', 'nested \\sqrt{', () => nested('\\sqrt{', 'x', '}'), (s) => latexToMathjs(s)],
  ['latexToMathjs', '\\sqrt[ opens', () => rep('\\sqrt['), (s) => latexToMathjs(s)],
  ['latexToMathjs', '\\pi\\cdot runs', () => rep('\\pi\\cdot'), (s) => latexToMathjs(s)],
  ['symbolicallyEqual', '1 MiB sums', () => pair(`${rep('x+', SIZE - 1)}x`, (s) => `${s}+0`), (p) => symbolicallyEqual(...p)],
  ['symbolicallyEqual', 'powers at the length cap', () => pair(`${'(x+1)^'.repeat(49)}2`, (s) => `${s}+0`), (p) => symbolicallyEqual(...p)],
  [
    'symbolicallyEqual',
    'products at the length cap',
    () => pair(`${'(x+y)*'.repeat(49)}2`, (s) => `2*${s}`),
    (p) => symbolicallyEqual(...p),
  ],
  [
    'symbolicallyEqual',
    'alternating sums of 16 x and y',
    () => pair(alternating(16), (s) => s.replace(/[xy]/g, (c) => (c === 'x' ? 'y' : 'x'))),
    (p) => symbolicallyEqual(...p),
  ],
  [
    'symbolicallyEqual',
    'alternating sums at the simplify cap',
    () => pair(alternating(6), (s) => s.replace(/[xy]/g, (c) => (c === 'x' ? 'y' : 'x'))),
    (p) => symbolicallyEqual(...p),
  ],
  [
    'symbolicallyEqual',
    'sums of 5 terms at the simplify cap',
    () => pair(alternating(5), (s) => s.replace(/[xy]/g, (c) => (c === 'x' ? 'y' : 'x'))),
    (p) => symbolicallyEqual(...p),
  ],
  ['extractVerifierVerdict', '<verify> opens', () => rep('<verify>'), (s) => extractVerifierVerdict(s)],
  ['extractVerifierVerdict', '<verify> then whitespace', () => `<verify>${rep(' ', SIZE - 8)}`, (s) => extractVerifierVerdict(s)],
  ['extractVerifierVerdict', '"<verify>approve " runs', () => rep('<verify>approve '), (s) => extractVerifierVerdict(s)],
  ['scoreMathResponse', '\\boxed{ opens', () => rep('\\boxed{'), (s) => scoreMathResponse(s, '1')],
  ['scoreMathResponse', '1 MiB boxed answer', () => `\\boxed{0.${rep('3', SIZE - 10)}}`, (s) => scoreMathResponse(s, '1/3')],
  ['scoreMathResponse', 'nested tuple boxed', () => `\\boxed{${nested('(1,', '1', ')').slice(8)}}`, (s) => scoreMathResponse(s, '(1,2)')],

  // env-search
  ['extractLastAnswer', '<answer> opens, no close', () => rep('<answer>'), (s) => extractLastAnswer(s)],
  ['extractLastAnswer', '<answer>x</answer> pairs', () => rep('<answer>x</answer>'), (s) => extractLastAnswer(s)],
  ['extractLastAnswer', '</answer> runs', () => rep('</answer>'), (s) => extractLastAnswer(s)],
  ['parseSearchAction', '<search> opens, no close', () => rep('<search>'), (s) => parseSearchAction(s)],
  ['parseSearchAction', '<answer> opens, then </search>', () => `${rep('<answer>', SIZE - 9)}</search>`, (s) => parseSearchAction(s)],
  ['parseSearchAction', '<search><answer> opens', () => rep('<search><answer>'), (s) => parseSearchAction(s)],
  ['parseVerifierDecision', '<verify> opens', () => rep('<verify>'), (s) => parseVerifierDecision(s)],
  ['parseVerifierDecision', '<verify> then whitespace', () => `<verify>${rep(' ', SIZE - 8)}`, (s) => parseVerifierDecision(s)],
  ['normalizeAnswer', '"the " runs', () => rep('the '), (s) => normalizeAnswer(s)],
  ['normalizeAnswer', 'punctuation', () => rep('!.,'), (s) => normalizeAnswer(s)],
  ['normalizeAnswer', 'İ (lower-cases longer)', () => rep('İ '), (s) => normalizeAnswer(s)],
  ['tokenF1', 'distinct tokens (two halves)', () => pair(words(SIZE / 12), (s) => s), (p) => tokenF1(...p)],
  ['tokenF1', 'one token repeated', () => rep('a b '), (s) => tokenF1(s, 'b b b')],
  ['scoreSearchAnswer', '2^17 golden answers', () => Array(SIZE >> 3).fill('Osmara'), (g) => scoreSearchAnswer('the Osmara', g)],
  ['exactMatch', 'distinct tokens, 10 goldens', () => words(SIZE / 66), (s) => exactMatch(s, Array(10).fill(s.slice(1)))],
  ['Tokenizer.tokenize', 'words and stop words', () => rep('The quick brown fox, of the year. '), (s) => tokenizer.tokenize(s)],
  ['Tokenizer.tokenize', 'İ and digits', () => rep('İ1 '), (s) => tokenizer.tokenize(s)],
  ['parseRetrieveRequest', 'one 1 MiB query', () => ({ queries: [rep('q')] }), (b) => parseRetrieveRequest(b, limits)],
  ['parseRetrieveRequest', '2^17 queries', () => ({ queries: Array(SIZE >> 3).fill('q') }), (b) => parseRetrieveRequest(b, limits)],
  [
    'parseRetrieveRequest',
    '1 MiB invalid query',
    () => ({ queries: [{ text: rep('q') }] }),
    (b) => expectThrow(() => parseRetrieveRequest(b, limits)),
  ],
  [
    'parseRetrieveRequest',
    '1 MiB invalid topk',
    () => ({ queries: ['q'], topk: rep('9') }),
    (b) => expectThrow(() => parseRetrieveRequest(b, limits)),
  ],
  [
    'readRetrieveResponse',
    '2^14 scored documents',
    () => ({ result: [Array.from({ length: SIZE >> 6 }, (_, i) => ({ document: { id: i, contents: rep('c', 48) }, score: 1 }))] }),
    (b) => readRetrieveResponse(b, 1),
  ],
  ['readRetrieveResponse', '2^17 empty lists', () => ({ result: Array(SIZE >> 3).fill([]) }), (b) => readRetrieveResponse(b, SIZE >> 3)],
  [
    'parseQaRecord',
    '1 MiB question, 2^14 answers',
    () => ({ question: rep('q'), golden_answers: Array(SIZE >> 6).fill('a') }),
    (r) => parseQaRecord(r, 'qa.jsonl', 1),
  ],
  [
    'parseQaRecord',
    '1 MiB invalid answer',
    () => ({ question: 'q', answer: { a: rep('a') } }),
    (r) => expectThrow(() => parseQaRecord(r, 'qa.jsonl', 1)),
  ],
  ['parseCorpusRecord', '1 MiB contents', () => ({ id: 1, contents: rep('c') }), (r) => parseCorpusRecord(r, 'corpus.jsonl', 1)],
  [
    'parseCorpusRecord',
    '1 MiB invalid contents',
    () => ({ id: 1, contents: [rep('c')] }),
    (r) => expectThrow(() => parseCorpusRecord(r, 'c.jsonl', 1)),
  ],

  // core
  ['parseOverride', 'dotted key of 1 MiB', () => `${rep('a.', SIZE - 3)}b=1`, (s) => parseOverride(s)],
  ['parseOverride', '"=" runs', () => rep('='), (s) => expectThrow(() => parseOverride(s))],
  ['coerceOverride', '1 MiB digits then "x"', () => ({ path: ['x'], raw: `${rep('1', SIZE - 1)}x` }), (o) => coerceOverride(o, undefined)],
  ['coerceOverride', '1 MiB "[" runs', () => ({ path: ['x'], raw: rep('[') }), (o) => coerceOverride(o, undefined)],

  // models tokenizer
  ['preTokenize ByteLevel', 'words', () => rep('hello world, 123! '), (s) => byteLevel([s])],
  ['preTokenize ByteLevel', 'whitespace runs', () => rep(`${' '.repeat(1000)}x`), (s) => byteLevel([s])],
  ['preTokenize Qwen2 split', 'whitespace runs', () => rep(`${' '.repeat(1000)}x`), (s) => qwenSplit([s])],
  ['preTokenize Qwen2 split', 'spaces then newline', () => rep(`${'\t'.repeat(1000)}\n`), (s) => qwenSplit([s])],
  ['preTokenize Whitespace', 'İ, emoji, marks', () => rep('İ😀e\u0301 .'), (s) => whitespace([s])],
  ['preTokenize Digits', 'digit runs', () => rep('1234567 '), (s) => digits([s])],
  ['preTokenize Punctuation', 'punctuation', () => rep('.,!'), (s) => punctuation([s])],
  ['normalizer Sequence', 'NFKC, replace, lowercase', () => rep('ﬃ İ ß '), (s) => normalizer(s)],
  ['translateRegex', '1 MiB pattern (refused)', () => rep('(?i:a)'), (s) => expectThrow(() => translateRegex(s))],
  ['translateRegex', '"(?i:a)" groups at the length cap', () => whole('(?i:a)', 10000), (s) => translateRegex(s)],
  ['translateRegex', 'classes at the length cap', () => whole('(?i:[a-zß\\p{L}])', 10000), (s) => translateRegex(s)],
  ['compileTokenizerRegex', '"(" runs at the length cap', () => rep('(', 10000), (s) => expectThrow(() => compileTokenizerRegex(s))],
  ['compileTokenizerRegex', 'alternatives at the length cap', () => whole('(?:a|\\p{L}+)', 10000), (s) => compileTokenizerRegex(s)],
];

/** Runs `f`, which must throw a DrmasError (a documented rejection of bad input). */
function expectThrow(f) {
  try {
    f();
  } catch (error) {
    if (typeof error?.code === 'string') return error;
    throw error;
  }
  throw new Error('expected a DrmasError');
}

function time(run, input) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  run(input);
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { wall, cpu: (used.user + used.system) / 1000 };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const loadAtStart = loadavg().map((x) => x.toFixed(2));
const rows = [];
for (const [parser, shape, make, run] of CASES) {
  if (ONLY && !parser.includes(ONLY)) continue;
  const input = make();
  let row;
  try {
    const warmUp = time(run, input);
    const times = warmUp.wall > GIVE_UP_MS ? [warmUp] : Array.from({ length: ROUNDS }, () => time(run, input));
    row = { parser, shape, ms: median(times.map((t) => t.wall)), cpu: median(times.map((t) => t.cpu)), rounds: times.length };
  } catch (error) {
    row = { parser, shape, ms: NaN, cpu: NaN, rounds: 0, error: `${error?.name}: ${String(error?.message).slice(0, 80)}` };
  }
  rows.push(row);
  console.error(`bench: ${parser} / ${shape}: ${row.error ?? `${row.ms.toFixed(1)} ms`}`);
}

const mark = (r) => (r.error ? `THREW ${r.error}` : r.ms > LIMIT_MS ? `OVER ${LIMIT_MS} ms${r.rounds === 1 ? ' (1 round)' : ''}` : '');
const fmt = (x) => (Number.isNaN(x) ? '–' : x.toFixed(1));
const table = (title, list) => {
  const cells = list.map((r) => [r.parser, r.shape, fmt(r.ms), fmt(r.cpu), mark(r)]);
  const header = ['parser', title, 'median ms', 'cpu ms', ''];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c) =>
    c
      .map((x, i) => (i === 2 || i === 3 ? x.padStart(widths[i]) : x.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const c of cells) console.log(line(c));
};

console.log(`parsers on adversarial inputs of ${SIZE} characters, median of ${ROUNDS} rounds after a warm-up (node ${process.version})`);
console.log(
  `load average (1, 5, 15 min) at start ${loadAtStart.join(', ')}, at end ${loadavg()
    .map((x) => x.toFixed(2))
    .join(', ')}\n`,
);
table('input shape', rows);
const worst = new Map();
for (const r of rows) {
  const seen = worst.get(r.parser);
  if (!seen || r.error || (!seen.error && r.ms > seen.ms)) worst.set(r.parser, r);
}
console.log(`\nslowest shape of each parser:\n`);
table('slowest shape', [...worst.values()]);
const failing = rows.filter((r) => r.error || r.ms > LIMIT_MS);
console.log(`\n${failing.length} of ${rows.length} shapes over ${LIMIT_MS} ms or failing`);
process.exitCode = failing.length ? 1 : 0;
