/**
 * clean_up_tokenization_spaces as transformers 5 applies it (5.24.0, `TokenizersBackend._decode`): never to a BPE
 * model unless the config also sets clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output, always
 * to the others. On Meta's published Llama 3 tokenizer, whose config asks for the clean-up.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REAL_TOKENIZERS } from '../../test/support/realTokenizers.js';
import { Tokenizer } from '../src/tokenizer/Tokenizer.js';
import type { TokenizerConfigJson, TokenizerJson } from '../src/tokenizer/tokenizerJson.js';

const dir = REAL_TOKENIZERS.llama3;
const json = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')) as TokenizerJson;
const config = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')) as TokenizerConfigJson;

// Spaces before the punctuation the clean-up removes (` ?`, ` .`, ` ,`, ` !`, ` 's`, ` n't`, ...).
const TEXTS = ['x ?? 0', 'a , b . c ! d ?', "it 's , isn 't , we 've , you 're , I 'm", "quote ' here", 'if (a != b) return a ?? b;'];

test("Llama 3's config asks for the clean-up", () => {
  expect(config.clean_up_tokenization_spaces).toBe(true);
});

test('a BPE tokenizer decodes its encoding back to the text, spaces before punctuation kept', async () => {
  const tokenizer = await Tokenizer.fromDirectory(dir);
  for (const text of TEXTS) expect(tokenizer!.decode(tokenizer!.encode(text, { addSpecialTokens: false }))).toBe(text);
  // With the clean-up off, decoding is byte-wise again, so streaming decodes token by token.
  expect(tokenizer!.decodesBytewise).toBe(true);
  expect([...tokenizer!.decodeIncremental(tokenizer!.encode('x ?? 0', { addSpecialTokens: false }))].join('')).toBe('x ?? 0');
});

test("transformers' opt-in cleans BPE output up anyway", () => {
  const tokenizer = new Tokenizer(json, { ...config, clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output: true });
  expect(tokenizer.decode(tokenizer.encode('x ?? 0', { addSpecialTokens: false }))).toBe('x?? 0');
  expect(tokenizer.decode(tokenizer.encode("a , b . it 's", { addSpecialTokens: false }))).toBe("a, b. it's");
});

test('a WordLevel tokenizer is still cleaned up', () => {
  const wordLevel: TokenizerJson = {
    pre_tokenizer: { type: 'WhitespaceSplit' },
    decoder: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always' },
    model: { type: 'WordLevel', vocab: { '▁hello': 0, '▁world': 1, '▁!': 2, '<unk>': 3 }, unk_token: '<unk>' },
  };
  expect(new Tokenizer(wordLevel, { clean_up_tokenization_spaces: true }).decode([0, 1, 2])).toBe('hello world!');
  expect(new Tokenizer(wordLevel, { clean_up_tokenization_spaces: false }).decode([0, 1, 2])).toBe('hello world !');
});
