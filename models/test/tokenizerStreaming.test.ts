import { byteLevelAlphabet } from '../src/tokenizer/byteLevel.js';
import { buildCharacterTokenizer } from '../src/tokenizer/buildCharacterTokenizer.js';
import { Tokenizer } from '../src/tokenizer/Tokenizer.js';
import { trainByteLevelBpe } from '../src/tokenizer/trainByteLevelBpe.js';

/** A byte-level tokenizer with no merges: every byte is its own token (id = byte value). */
function bytesOnly(): Tokenizer {
  const vocab: Record<string, number> = {};
  byteLevelAlphabet().forEach((ch, b) => (vocab[ch] = b));
  return new Tokenizer({
    added_tokens: [{ id: 256, content: '<|im_end|>', special: true }],
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, use_regex: true },
    decoder: { type: 'ByteLevel' },
    model: { type: 'BPE', vocab, merges: [] },
  });
}

test('a character split across tokens is held back until complete', () => {
  const tok = bytesOnly();
  // "é€😀" in UTF-8: C3 A9 | E2 82 AC | F0 9F 98 80
  const ids = tok.encode('é€😀');
  expect(ids).toEqual([0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80]);
  const decoder = tok.createStreamingDecoder();
  expect(ids.map((id) => decoder.push(id))).toEqual(['', 'é', '', '', '€', '', '', '', '😀']);
  expect(decoder.flush()).toBe('');
  expect(decoder.text).toBe('é€😀');
});

test('an incomplete character at the end flushes as U+FFFD, like decode', () => {
  const tok = bytesOnly();
  const decoder = tok.createStreamingDecoder();
  expect(decoder.pushAll([0x61, 0xe2, 0x82])).toBe('a');
  expect(decoder.flush()).toBe('\uFFFD');
  expect(tok.decode([0x61, 0xe2, 0x82])).toBe('a\uFFFD');
});

test('special tokens stream as text unless skipped', () => {
  const tok = bytesOnly();
  expect([...tok.decodeIncremental([0x68, 0x69, 256])]).toEqual(['h', 'i', '<|im_end|>']);
  expect([...tok.decodeIncremental([0x68, 0x69, 256], { skipSpecialTokens: true })].join('')).toBe('hi');
});

test('streamed text equals decode on a trained tokenizer, for every prefix', () => {
  const text = 'Grüße aus 東京 😀👍🏽 — naïve   spaces\n<|im_end|>';
  const tok = trainByteLevelBpe([text.repeat(3)], { vocabSize: 300 });
  const ids = tok.encode(text);
  const decoder = tok.createStreamingDecoder();
  let streamed = '';
  for (const [i, id] of ids.entries()) {
    streamed += decoder.push(id);
    const full = tok.decode(ids.slice(0, i + 1));
    // What has streamed is the decoded prefix without a trailing incomplete character.
    expect(full.startsWith(streamed)).toBe(true);
    expect(full.slice(streamed.length).replace(/\uFFFD/g, '')).toBe('');
  }
  streamed += decoder.flush();
  expect(streamed).toBe(text);
});

test('character tokenizers stream one character per token', () => {
  const tok = buildCharacterTokenizer('ab😀');
  expect([...tok.decodeIncremental(tok.encode('a😀b'))]).toEqual(['a', '😀', 'b']);
});

test('tokenizers without a byte-wise decoder stream by re-decoding', () => {
  // Metaspace (SentencePiece style) decoding, WordLevel model.
  const tok = new Tokenizer({
    pre_tokenizer: { type: 'WhitespaceSplit' },
    decoder: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always' },
    model: { type: 'WordLevel', vocab: { '▁hello': 0, '▁world': 1, '!': 2, '<unk>': 3 }, unk_token: '<unk>' },
  });
  expect(tok.decodesBytewise).toBe(false);
  expect([...tok.decodeIncremental([0, 1, 2])]).toEqual(['hello', ' world', '!']);
});
