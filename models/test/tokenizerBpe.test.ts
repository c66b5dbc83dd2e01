import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { byteLevelAlphabet } from '../src/tokenizer/byteLevel.js';
import { Tokenizer } from '../src/tokenizer/Tokenizer.js';
import type { TokenizerJson } from '../src/tokenizer/tokenizerJson.js';

/**
 * A hand-made byte-level BPE tokenizer.json. Ids 0..255 are the 256 byte-level characters in byte order, so a
 * byte's id is its value ('h' = 104, 'Ġ' = the space byte = 32). The merges, by rank:
 *   0 "h e" -> "he" 256      1 "l l" -> "ll" 257      2 "Ġ t" -> "Ġt" 258     3 "Ġt he" -> "Ġthe" 259
 *   4 "he ll" -> "hell" 260  5 "hell o" -> "hello" 261  6 "e l" -> "el" 262
 * Added tokens: <|endoftext|> 263, <|im_start|> 264, <|im_end|> 265 (special), <tool> 266 (not special).
 */
function handMadeJson(): TokenizerJson {
  const alphabet = byteLevelAlphabet();
  const vocab: Record<string, number> = {};
  alphabet.forEach((ch, b) => (vocab[ch] = b));
  ['he', 'll', 'Ġt', 'Ġthe', 'hell', 'hello', 'el'].forEach((t, i) => (vocab[t] = 256 + i));
  const added = (id: number, content: string, special = true) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special,
  });
  return {
    version: '1.0',
    added_tokens: [added(263, '<|endoftext|>'), added(264, '<|im_start|>'), added(265, '<|im_end|>'), added(266, '<tool>', false)],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    // Both merge spellings of tokenizer.json: "a b" strings and [a, b] pairs.
    model: { type: 'BPE', vocab, merges: ['h e', 'l l', ['Ġ', 't'], ['Ġt', 'he'], 'he ll', 'hell o', 'e l'] },
  };
}

describe('hand-made byte-level BPE', () => {
  const tok = new Tokenizer(handMadeJson());

  test('the GPT-2 byte table', () => {
    const alphabet = byteLevelAlphabet();
    expect(alphabet[32]).toBe('Ġ');
    expect(alphabet[10]).toBe('Ċ');
    expect(alphabet[0]).toBe('Ā');
    expect(alphabet[104]).toBe('h');
    expect(alphabet[0xc3]).toBe('Ã');
    expect(new Set(alphabet).size).toBe(256);
  });

  test('hand-worked merges', () => {
    // "hello the" splits into "hello" and " the" (= "Ġthe").
    // "hello": h e l l o -> rank 0 gives he l l o -> rank 1 he ll o -> rank 4 hell o -> rank 5 hello = 261.
    // "Ġthe":  Ġ t h e  -> rank 0 gives Ġ t he -> rank 2 Ġt he -> rank 3 Ġthe = 259.
    expect(tok.encode('hello the')).toEqual([261, 259]);
    // "yellow": candidates "e l" (rank 6) and "l l" (rank 1); the lower rank wins although it is further right,
    // after which "e ll" has no merge: y e ll o w.
    expect(tok.encode('yellow')).toEqual([121, 101, 257, 111, 119]);
    // " hello" is one piece "Ġhello": the merges build "hello", and "Ġ hello" has no merge.
    expect(tok.encode(' hello')).toEqual([32, 261]);
    // "a  b": the split gives "a", " " (a space run keeps its last space for the next word), " b".
    expect(tok.encode('a  b')).toEqual([97, 32, 32, 98]);
    // "é" is UTF-8 C3 A9: the byte characters 'Ã' (195) and '©' (169).
    expect(tok.encode('é')).toEqual([195, 169]);
  });

  test('added tokens are matched before the model runs', () => {
    expect(tok.encode('<|im_start|>hello<|im_end|>')).toEqual([264, 261, 265]);
    expect(tok.encode('he<tool>he')).toEqual([256, 266, 256]);
    // A partial special token is plain text.
    expect(tok.encode('<|im_')).toEqual([60, 124, 105, 109, 95]);
  });

  test('decode, with and without special tokens', () => {
    expect(tok.decode([264, 261, 259, 265])).toBe('<|im_start|>hello the<|im_end|>');
    expect(tok.decode([264, 261, 259, 265, 266], { skipSpecialTokens: true })).toBe('hello the<tool>');
    expect(tok.decode([195, 169])).toBe('é');
    // A lone continuation byte is not valid UTF-8.
    expect(tok.decode([169])).toBe('\uFFFD');
    // Ids beyond the tokenizer decode to nothing.
    expect(tok.decode([261, 9999])).toBe('hello');
  });

  test('token <-> id and sizes', () => {
    expect(tok.vocabSize).toBe(267);
    expect(tok.tokenToId('Ġthe')).toBe(259);
    expect(tok.tokenToId('<|im_end|>')).toBe(265);
    expect(tok.idToToken(261)).toBe('hello');
    expect(tok.idToToken(263)).toBe('<|endoftext|>');
    expect(tok.tokenToId('nope')).toBeUndefined();
    expect(tok.isSpecialTokenId(264)).toBe(true);
    expect(tok.isSpecialTokenId(266)).toBe(false);
  });

  test('round trips', () => {
    for (const text of ['hello the yellow fellow', 'Ünïcödé façade naïve', '日本語のテキスト', '👍🏽 family: 👨‍👩‍👧', '  \t\n\n   x  ', '']) {
      expect(tok.decode(tok.encode(text))).toBe(text);
    }
  });
});

describe('loading from a folder', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'drmas-tokenizer-'));
    await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(handMadeJson()));
    await writeFile(
      join(dir, 'tokenizer_config.json'),
      JSON.stringify({
        add_bos_token: true,
        bos_token: { content: '<|endoftext|>', lstrip: false, __type: 'AddedToken' },
        eos_token: '<|im_end|>',
        pad_token: '<|endoftext|>',
        chat_template: "{% for m in messages %}{{ m['content'] }}{% endfor %}",
      }),
    );
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('special tokens, add_bos_token and save/reload', async () => {
    const tok = (await Tokenizer.fromDirectory(dir))!;
    expect(tok.bosTokenId).toBe(263);
    expect(tok.eosTokenId).toBe(265);
    expect(tok.padTokenId).toBe(263);
    expect(tok.encode('hello')).toEqual([263, 261]);
    expect(tok.encode('hello', { addSpecialTokens: false })).toEqual([261]);
    expect(tok.applyChatTemplate([{ role: 'user', content: 'x' }])).toBe('x');

    const copy = join(dir, 'copy');
    await tok.save(copy);
    const again = (await Tokenizer.fromDirectory(copy))!;
    expect(again.encode('hello the <|im_end|>')).toEqual(tok.encode('hello the <|im_end|>'));
    expect(again.eosTokenId).toBe(265);
  });

  test('a folder without tokenizer.json gives undefined', async () => {
    expect(await Tokenizer.fromDirectory(join(dir, 'nothing-here'))).toBeUndefined();
  });

  test('an unsupported model type is a clear error', () => {
    expect(() => new Tokenizer({ model: { type: 'Unigram', vocab: [] } })).toThrow(/model type "Unigram" is not supported/);
  });

  test('a merge over tokens missing from the vocab is a clear error', () => {
    const json = handMadeJson();
    (json.model as { merges: string[] }).merges.push('x yz');
    expect(() => new Tokenizer(json)).toThrow(/merge #7 "x yz" uses a token missing from the vocab/);
  });
});

describe('Qwen2 / Llama-3 style tokenizer.json (Split regex + ByteLevel without regex)', () => {
  const QWEN2 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  const LLAMA3 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

  function withPattern(pattern: string, ignoreMerges = false): Tokenizer {
    const json = handMadeJson();
    json.pre_tokenizer = {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
      ],
    };
    json.normalizer = { type: 'NFC' };
    (json.model as { ignore_merges?: boolean }).ignore_merges = ignoreMerges;
    return new Tokenizer(json);
  }

  test('the case-insensitive contraction group and single digits', () => {
    const tok = withPattern(QWEN2);
    // Pieces: "I" "'M" " " "1" "2" "3" -- each a lone byte, no merges apply.
    expect(tok.encode("I'M 123")).toEqual([73, 39, 77, 32, 49, 50, 51]);
    expect(tok.decode(tok.encode("I'M 123 go!\n\n  x"))).toBe("I'M 123 go!\n\n  x");
  });

  test('NFC normalization composes e + combining acute into é', () => {
    expect(withPattern(QWEN2).encode('e\u0301')).toEqual([195, 169]);
  });

  test('Llama-3 digits in groups of three and ignore_merges', () => {
    const tok = withPattern(LLAMA3, true);
    expect(tok.decode(tok.encode('12345'))).toBe('12345');
    expect(tok.encode('hello')).toEqual([261]);
  });
});
