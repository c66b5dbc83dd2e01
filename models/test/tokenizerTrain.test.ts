import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCharacterTokenizer } from '../src/tokenizer/buildCharacterTokenizer.js';
import { Tokenizer } from '../src/tokenizer/Tokenizer.js';
import { trainByteLevelBpe } from '../src/tokenizer/trainByteLevelBpe.js';

/** Deterministic pseudo-text: words, numbers, punctuation, a little unicode and chat markup. */
function corpus(bytes: number, seed = 1): string[] {
  const words = (
    'the a of to and in is was that for it with as his on be at by had are but from or have an they which one you ' +
    'were all we when there can said who been has their more if will would about out many then them these so some ' +
    'agent reward policy model token train value loss step gradient sample reply answer question tool call think'
  ).split(' ');
  const extras = ['café', 'naïve', '東京', '日本語', '😀', 'Ωmega', '—', '\n', '\n\n', '  '];
  // mulberry32
  let state = seed;
  const rand = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const syllables = 'ka lo mi ne ru sa to vi ze ba de fo gu hi ja po qua ster tion ing ly pre con'.split(' ');
  const madeUpWord = () => {
    let w = '';
    for (let n = 1 + Math.floor(rand() * 4); n > 0; n--) w += syllables[Math.floor(rand() * syllables.length)];
    return rand() < 0.1 ? w.charAt(0).toUpperCase() + w.slice(1) : w;
  };
  const docs: string[] = [];
  let size = 0;
  while (size < bytes) {
    let doc = '<|im_start|>user\n';
    for (let i = 0; i < 200; i++) {
      const r = rand();
      doc +=
        r < 0.5
          ? words[Math.floor(rand() * words.length)]
          : r < 0.85
            ? madeUpWord()
            : r < 0.93
              ? String(Math.floor(rand() * 1000))
              : extras[Math.floor(rand() * extras.length)];
      doc += rand() < 0.1 ? '. ' : rand() < 0.05 ? ', ' : ' ';
    }
    doc += '<|im_end|>\n';
    docs.push(doc);
    size += doc.length;
  }
  return docs;
}

const SAMPLES = [
  'Hello, world! The agent answered 42.',
  'Ünïcödé façade naïve café — Ωmega',
  '東京は日本の首都です。中文测试',
  '😀👍🏽👨‍👩‍👧 emoji',
  '  leading and   multiple   spaces\t\ttabs\n\n\nnewlines   ',
  '<|im_start|>assistant\nsure<|im_end|>\n',
];

describe('trainByteLevelBpe', () => {
  const text = corpus(100_000);

  test('exactly vocabSize ids, special tokens last, deterministic', () => {
    const tok = trainByteLevelBpe(text, { vocabSize: 512 });
    expect(tok.vocabSize).toBe(512);
    expect(tok.tokenToId('<|endoftext|>')).toBe(508);
    expect(tok.tokenToId('<|im_start|>')).toBe(509);
    expect(tok.tokenToId('<|im_end|>')).toBe(510);
    expect(tok.tokenToId('<pad>')).toBe(511);
    expect(tok.eosTokenId).toBe(510);
    expect(tok.padTokenId).toBe(511);
    for (let id = 0; id < 512; id++) expect(tok.idToToken(id)).toBeDefined();
    const again = trainByteLevelBpe(text, { vocabSize: 512 });
    expect(JSON.stringify(again.toJSON())).toBe(JSON.stringify(tok.toJSON()));
    // Frequent words become single tokens; special-token text never enters the merges.
    expect(tok.encode(' the')).toHaveLength(1);
    expect(Object.keys((tok.toJSON().model as { vocab: object }).vocab).some((t) => t.includes('im_start'))).toBe(false);
  });

  test('round trips text it was and was not trained on', () => {
    const tok = trainByteLevelBpe(text, { vocabSize: 512 });
    for (const s of SAMPLES) expect(tok.decode(tok.encode(s))).toBe(s);
    expect(tok.encode('<|im_start|>')).toEqual([509]);
  });

  test('a corpus with too few pairs is filled with reserved tokens', () => {
    const tok = trainByteLevelBpe(['abab'], { vocabSize: 300, specialTokens: ['<|endoftext|>'] });
    expect(tok.vocabSize).toBe(300);
    // Pairs: "a b" (2x) -> "ab", then "ab ab" -> "abab"; nothing more to merge.
    expect(tok.encode('abab')).toEqual([257]);
    expect(tok.idToToken(258)).toBe('<|reserved_0|>');
    expect(tok.tokenToId('<|endoftext|>')).toBe(299);
  });

  test('vocabSize too small is an error', () => {
    expect(() => trainByteLevelBpe(['x'], { vocabSize: 259 })).toThrow(/at least 256 \+ 4 special tokens/);
  });

  test('saves and reloads', async () => {
    const tok = trainByteLevelBpe(text, { vocabSize: 400 });
    const dir = await mkdtemp(join(tmpdir(), 'drmas-bpe-'));
    try {
      await tok.save(dir);
      const back = (await Tokenizer.fromDirectory(dir))!;
      for (const s of SAMPLES) expect(back.encode(s)).toEqual(tok.encode(s));
      expect(back.eosTokenId).toBe(tok.eosTokenId);
      expect(back.applyChatTemplate([{ role: 'user', content: 'x' }])).toBe(tok.applyChatTemplate([{ role: 'user', content: 'x' }]));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('vocabulary 4096 on ~1 MB of text in a few seconds', () => {
    const big = corpus(1_000_000, 7);
    const start = performance.now();
    const tok = trainByteLevelBpe(big, { vocabSize: 4096 });
    const seconds = (performance.now() - start) / 1000;
    expect(tok.vocabSize).toBe(4096);
    expect(tok.tokenToId('<|reserved_0|>')).toBeUndefined(); // all 4092 non-special ids are bytes and merges
    expect(seconds).toBeLessThan(10);
    const encodeStart = performance.now();
    const ids = tok.encode(big.slice(0, 100).join(''));
    expect(tok.decode(ids)).toBe(big.slice(0, 100).join(''));
    expect(performance.now() - encodeStart).toBeLessThan(3000);
  });
});

describe('buildCharacterTokenizer', () => {
  test('one id per character, sorted by code point, then unk, then special tokens', () => {
    const tok = buildCharacterTokenizer('cab\n');
    // "\n" (U+000A) 0, "a" 1, "b" 2, "c" 3, <unk> 4, then the four default special tokens 5..8.
    expect(tok.encode('abc\ncab')).toEqual([1, 2, 3, 0, 3, 1, 2]);
    expect(tok.tokenToId('<unk>')).toBe(4);
    expect(tok.encode('<|im_start|>ax<|im_end|>')).toEqual([6, 1, 4, 7]);
    expect(tok.decode([6, 1, 2, 7])).toBe('<|im_start|>ab<|im_end|>');
    expect(tok.decode([6, 1, 2, 7], { skipSpecialTokens: true })).toBe('ab');
    expect(tok.vocabSize).toBe(9);
  });

  test('from a corpus, padded to an exact vocabulary size, unicode round trip', () => {
    const text = ['héllo wörld', '日本 😀'];
    const tok = buildCharacterTokenizer(text, { vocabSize: 64 });
    expect(tok.vocabSize).toBe(64);
    expect(tok.tokenToId('<pad>')).toBe(63);
    for (const s of text) expect(tok.decode(tok.encode(s))).toBe(s);
    expect(tok.encode('😀')).toHaveLength(1);
    expect(() => buildCharacterTokenizer('abc', { vocabSize: 5 })).toThrow(/vocabSize 5 is too small/);
  });
});
