import { compileTokenizerRegex, translateRegex } from '../src/tokenizer/regexTranslation.js';
import { GPT2_SPLIT_PATTERN, splitByRegex } from '../src/tokenizer/preTokenize.js';

const QWEN2 =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const split = (pattern: string, text: string) => splitByRegex(text, compileTokenizerRegex(pattern), 'Isolated');

test('scoped case-insensitive groups are expanded for JavaScript', () => {
  expect(translateRegex("(?i:'s|'re)|x")).toBe("(?:'[sS]|'[rR][eE])|x");
  expect(translateRegex('(?i:[a-c]q)')).toBe('(?:[a-cA-C][qQ])');
  expect(translateRegex("\\'a")).toBe("'a");
});

test('unsupported constructs are reported with the pattern', () => {
  expect(() => translateRegex('a++')).toThrow(/"a\+\+".*possessive quantifier/);
  expect(() => translateRegex('(?>a)')).toThrow(/atomic group/);
});

test('GPT-2 split', () => {
  // Hand-applied: "'M" is not a (case-sensitive) contraction; " 123" keeps its space; "\n\n " ends where the
  // last space can start the next word.
  expect(split(GPT2_SPLIT_PATTERN, "I'M 123 go!\n\n  x")).toEqual(['I', "'", 'M', ' 123', ' go', '!', '\n\n ', ' x']);
  expect(split(GPT2_SPLIT_PATTERN, "we're   done")).toEqual(['we', "'re", '  ', ' done']);
});

test('Qwen2 split', () => {
  // Hand-applied: "'M" matches (?i:'m); digits are single; "!" takes the newlines after it.
  expect(split(QWEN2, "I'M 123 go!\n\n  x")).toEqual(['I', "'M", ' ', '1', '2', '3', ' go', '!\n\n', ' ', ' x']);
  expect(split(QWEN2, '你好，世界')).toEqual(['你好', '，世界']);
});

test('split behaviors', () => {
  const dash = /-/gu;
  expect(splitByRegex('a-b--c', dash, 'Removed')).toEqual(['a', 'b', 'c']);
  expect(splitByRegex('a-b--c', dash, 'Isolated')).toEqual(['a', '-', 'b', '-', '-', 'c']);
  expect(splitByRegex('a-b--c', dash, 'MergedWithPrevious')).toEqual(['a-', 'b-', '-', 'c']);
  expect(splitByRegex('a-b--c', dash, 'MergedWithNext')).toEqual(['a', '-b', '-', '-c']);
  expect(splitByRegex('a-b--c', dash, 'Contiguous')).toEqual(['a', '-', 'b', '--', 'c']);
  expect(splitByRegex('a-b--c', dash, 'Removed', true)).toEqual(['-', '-', '-']);
});
