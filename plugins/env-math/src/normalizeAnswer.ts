import { readBraceGroup } from '@drmas/core';

const TEXT_COMMANDS = /\\(?:text|textbf|textrm|mbox|mathrm|mathbf|operatorname)\s*\{/g;

/** The last character of `s` that is not whitespace, or `fallback` when `s` is all whitespace. */
function lastNonSpace(s: string, fallback: string): string {
  for (let i = s.length - 1; i >= 0; i--) if (!/\s/.test(s[i]!)) return s[i]!;
  return fallback;
}

/**
 * Replaces `\cmd{X}` by `keep(X, c)` for every match of `pattern` (which must end at the opening brace), where `c`
 * is the last non-space character written before the command ('' when none). `c` is kept up to date piece by piece:
 * testing the whole text written so far at every command took time quadratic in the number of commands.
 */
function replaceGroups(s: string, pattern: RegExp, keep: (content: string, before: string) => string): string {
  let out = '';
  let before = '';
  let from = 0;
  pattern.lastIndex = 0;
  for (let m = pattern.exec(s); m; m = pattern.exec(s)) {
    const group = readBraceGroup(s, m.index + m[0].length - 1);
    if (!group) break;
    const between = s.slice(from, m.index);
    before = lastNonSpace(between, before);
    const kept = keep(group.content, before);
    out += between + kept;
    before = lastNonSpace(kept, before);
    from = group.end;
    pattern.lastIndex = group.end;
  }
  return out + s.slice(from);
}

/**
 * `\text{...}` after a value is a unit and goes with its power (`10\text{ cm}^2` -> `10`); an answer that is only text keeps the
 * words (`\text{(B)}` -> `(B)`).
 */
function removeTextUnits(s: string): string {
  const removed = '\u0000';
  return (
    replaceGroups(s, TEXT_COMMANDS, (content, before) => (/[0-9a-zA-Z})]/.test(before) ? removed : content))
      // eslint-disable-next-line no-control-regex -- NUL marks where a text command was removed; user text has none
      .replace(/\u0000\s*\^\s*(?:\{\s*\d\s*\}|\d)/g, '')
      // eslint-disable-next-line no-control-regex -- the same mark
      .replace(/\u0000/g, '')
  );
}

/** `\sqrt3` -> `\sqrt{3}`. */
function fixSqrt(s: string): string {
  return s.replace(/\\sqrt(?![a-zA-Z{[])\s*([0-9a-zA-Z])/g, '\\sqrt{$1}');
}

/** `\frac12` -> `\frac{1}{2}`, `\frac1{2}` -> `\frac{1}{2}`, `\frac{1}2` -> `\frac{1}{2}`. */
function fixFracs(s: string): string {
  return s
    .replace(/\\frac([0-9a-zA-Z])([0-9a-zA-Z])/g, '\\frac{$1}{$2}')
    .replace(/\\frac([0-9a-zA-Z])\{/g, '\\frac{$1}{')
    .replace(/\\frac(\{[^{}]*\})([0-9a-zA-Z])/g, '\\frac$1{$2}');
}

/** `x=3` -> `3` when the left side is one short name (`x`, `y_1`, `\theta`); equations stay as they are. */
function removeShortAssignment(s: string): string {
  const parts = s.split('=');
  if (parts.length !== 2) return s;
  const lhs = parts[0]!.trim();
  if (lhs.length <= 2 || /^(?:[a-zA-Z](?:_\{?\w+\}?)?|\\[a-zA-Z]+)$/.test(lhs)) return parts[1]!;
  return s;
}

/**
 * MATH-style answer normalization (Hendrycks et al.'s `strip_string`, extended): drops `\left`/`\right`, LaTeX
 * spacing, `$`, `\text{}` units, degrees, percent signs, spaces and a trailing period; `\dfrac`/`\tfrac` ->
 * `\frac`; `\frac12` -> `\frac{1}{2}`; `.5` -> `0.5`; `0.5` -> `\frac{1}{2}`; `a/b` of integers -> `\frac{a}{b}`;
 * `x=` prefix of a short name removed.
 */
export function normalizeMathAnswer(answer: string): string {
  let s = String(answer ?? '').trim();
  const boxed = /^\\(?:boxed|fbox)\s*\{/.exec(s);
  if (boxed) {
    const group = readBraceGroup(s, boxed[0].length - 1);
    if (group && group.end === s.length) s = group.content;
  }
  s = s
    .replace(/\n/g, '')
    .replace(/\\[!,;:]/g, '')
    .replace(/\\ /g, ' ')
    .replace(/\\\\/g, '\\')
    .replace(/\\[dt]frac/g, '\\frac')
    .replace(/\\(?:left|right)(?![a-zA-Z])/g, '')
    .replace(/\\displaystyle/g, '')
    .replace(/\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|°/g, '')
    .replace(/\\\$|\$/g, '')
    .replace(/^\\\(|\\\)$/g, '')
    .replace(/^\\\[|\\\]$/g, '');
  s = removeTextUnits(s);
  s = s.replace(/\\%|%/g, '').replace(/\{,\}/g, ',');
  s = s.replace(/ \./g, ' 0.').replace(/\{\./g, '{0.').trim();
  if (s.length === 0) return s;
  if (s.startsWith('.')) s = `0${s}`;
  s = s.replace(/^([+-])\./, '$10.');
  s = removeShortAssignment(s);
  s = fixSqrt(s);
  s = s.replace(/\s+/g, '');
  s = fixFracs(s);
  s = s.replace(/\.$/, '');
  if (s === '0.5') s = '\\frac{1}{2}';
  const slash = /^(-?)(\d+)\/(\d+)$/.exec(s);
  if (slash) s = `${slash[1]}\\frac{${slash[2]}}{${slash[3]}}`;
  return s;
}
