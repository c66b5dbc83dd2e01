/**
 * Compares encodings with the Hugging Face `tokenizers` library (test/reference/encode_with_tokenizers.py) on
 * tokenizers built here, in GPT-2, Qwen2 and Llama-3 pre-tokenizer styles and character level. Skipped, with a
 * warning, when the Python interpreter ($DRMAS_PYTHON, default /usr/bin/python3) lacks `tokenizers`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCharacterTokenizer } from '../src/tokenizer/buildCharacterTokenizer.js';
import { Tokenizer } from '../src/tokenizer/Tokenizer.js';
import type { TokenizerJson } from '../src/tokenizer/tokenizerJson.js';
import { trainByteLevelBpe } from '../src/tokenizer/trainByteLevelBpe.js';

const PYTHON = process.env.DRMAS_PYTHON ?? '/usr/bin/python3';
const script = join(dirname(fileURLToPath(import.meta.url)), 'reference', 'encode_with_tokenizers.py');
const probe = spawnSync(PYTHON, ['-c', 'import tokenizers'], { encoding: 'utf8' });
if (probe.status !== 0) {
  console.warn(`tokenizerPython tests skipped: ${PYTHON} cannot import the tokenizers library (set DRMAS_PYTHON to one that can)`);
}
const pythonTest = probe.status === 0 ? test : test.skip;

const TEXTS = [
  'Hello, world! The agent answered 42.',
  "I'M here, you're there; we'LL see. it's 12345 items",
  'Ünïcödé façade naïve café — Ωmega e\u0301',
  '東京は日本の首都です。中文测试，标点！',
  '😀👍🏽👨‍👩‍👧 emoji\u200d',
  '  leading and   multiple   spaces\t\ttabs\n\n\nnewlines   ',
  '\r\n\r\nwindows\r\nlines \n ',
  '<|im_start|>assistant\nsure<|im_end|>\n<|endoftext|>',
  'x<|im_end|>y <pad> z',
  '',
  ' ',
  'ÿþ\u0000\u0001\u007f\u00a0\u00ad',
];

const QWEN2_SPLIT =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const LLAMA3_SPLIT =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

function withSplit(json: TokenizerJson, pattern: string, ignoreMerges: boolean, nfc: boolean): TokenizerJson {
  return {
    ...json,
    normalizer: nfc ? { type: 'NFC' } : null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
      ],
    },
    model: { ...json.model, ignore_merges: ignoreMerges },
  };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'drmas-tok-py-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function corpus(): string[] {
  return TEXTS.concat(Array.from({ length: 200 }, (_, i) => `Sample ${i}: the policy's reward was ${i * 7} and THE value ${i % 13}.\n`));
}

const trained = () => trainByteLevelBpe(corpus(), { vocabSize: 600 }).toJSON();
const cases: [string, () => TokenizerJson][] = [
  ['GPT-2 style (trained)', trained],
  ['Qwen2 style', () => withSplit(trained(), QWEN2_SPLIT, false, true)],
  ['Llama-3 style', () => withSplit(trained(), LLAMA3_SPLIT, true, false)],
  ['character level', () => buildCharacterTokenizer(corpus().join('').replace('ÿ', ''), { vocabSize: 300 }).toJSON()],
];

describe.each(cases)('same ids and text as the tokenizers library: %s', (name, build) => {
  pythonTest('encode and decode', async () => {
    const json = build();
    const file = join(dir, `${name.replace(/\W+/g, '_')}.json`);
    await writeFile(file, JSON.stringify(json));
    const result = spawnSync(PYTHON, [script, file], { input: JSON.stringify(TEXTS), encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`encode_with_tokenizers.py failed: ${result.stderr}`);
    const expected = JSON.parse(result.stdout) as { ids: number[]; ids_no_special: number[]; decoded: string; decoded_skip: string }[];
    const tok = new Tokenizer(json);
    TEXTS.forEach((text, i) => {
      const ids = tok.encode(text);
      const want = expected[i]!;
      expect({ text, ids }).toEqual({ text, ids: want.ids });
      expect({ text, decoded: tok.decode(ids) }).toEqual({ text, decoded: want.decoded });
      expect({ text, decoded: tok.decode(ids, { skipSpecialTokens: true }) }).toEqual({ text, decoded: want.decoded_skip });
    });
  });
});
