import type { SplitMix32 } from '@drmas/core';

const ONSETS = [
  'b',
  'd',
  'f',
  'g',
  'k',
  'l',
  'm',
  'n',
  'p',
  'r',
  's',
  't',
  'v',
  'z',
  'br',
  'dr',
  'kr',
  'st',
  'th',
  'gr',
  'tr',
  'sh',
  'vr',
  'qu',
];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'a', 'e', 'o', 'ai', 'ei', 'ou', 'y'];
const CODAS = ['', '', '', 'n', 'r', 'l', 's', 'k', 'm', 'th', 'x', 'nd'];

/**
 * Makes pronounceable invented words from syllables. Every word it returns is new (across all calls), so no two
 * entities share a name token and a name never doubles as another entity's name.
 */
export class NameForge {
  private readonly used = new Set<string>();

  constructor(private readonly rng: SplitMix32) {}

  /** A fresh lower-case word of `minSyllables`..`maxSyllables` syllables, optionally with a fixed ending. */
  word(minSyllables: number, maxSyllables: number, ending = ''): string {
    for (let attempt = 0; ; attempt++) {
      const count = this.rng.range(minSyllables, maxSyllables + Math.floor(attempt / 50));
      let word = '';
      for (let i = 0; i < count; i++) {
        word += this.rng.pick(ONSETS) + this.rng.pick(VOWELS) + (i === count - 1 || this.rng.next() < 0.4 ? this.rng.pick(CODAS) : '');
      }
      word += ending;
      if (word.length >= 4 && !this.used.has(word)) {
        this.used.add(word);
        return word;
      }
    }
  }

  capitalized(minSyllables: number, maxSyllables: number, ending = ''): string {
    const word = this.word(minSyllables, maxSyllables, ending);
    return word[0]!.toUpperCase() + word.slice(1);
  }
}
