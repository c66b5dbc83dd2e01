import { extractBoxedAnswer } from './boxedAnswer.js';

/** What an agent's output turned into: the parsed action, or why the output is invalid. */
export interface ParsedOutput {
  /** `{ tag: 'verify', content: 'approve' }`, `{ tag: 'boxed', content: '42' }`, ...; undefined when invalid. */
  action?: TaggedAction;
  valid: boolean;
  /** Why the output is invalid (`missing <answer>`, `contains CJK characters`, ...). */
  reason?: string;
}

/** The content of the one action tag an agent's output must hold. */
export interface TaggedAction {
  tag: string;
  content: string;
}

/** The action an output must hold: an XML-like tag (`verify`, `search`, `answer`, ...) or `boxed` for `\boxed{}`. */
export interface OutputFormat {
  tag: string;
  /** Allowed contents (compared lower-case), e.g. `['approve', 'reject']`. */
  values?: readonly string[];
  /** A `<think>...</think>` block is required (it is always checked for well-formedness when present). */
  requireThink?: boolean;
}

/** Han, kana, hangul and CJK punctuation: Dr. MAS marks a turn invalid when the model drifts into them. */
const CJK = /[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/u;

const BOXED = 'boxed';

export function containsCjk(text: string): boolean {
  return CJK.test(text);
}

/**
 * Where `needle` occurs in `text`, matched case-insensitively on `text` itself. Lower-casing a copy and reading its
 * offsets would cut the original in the wrong places wherever case mapping changes a string's length (`İ` becomes
 * two code units). With the `i` flag (not `u`), a character matches only one of the same length in the other case,
 * and no non-ASCII character matches an ASCII one (`ı`, `ſ` and the Kelvin sign do not spell a tag).
 */
function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (const match of text.matchAll(new RegExp(needle.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'), 'gi'))) found.push(match.index);
  return found;
}

/**
 * Checks the `<think>` block: at most one, opened before it is closed. Returns the text outside it (where the
 * action is looked for, so tags written while thinking do not count), or why it is malformed.
 */
export function splitThink(text: string, required = false): { outside: string } | { reason: string } {
  const opens = occurrences(text, '<think>');
  const closes = occurrences(text, '</think>');
  if (opens.length > 1 || closes.length > 1) return { reason: 'more than one <think> block' };
  if (opens.length === 1 && closes.length === 0) return { reason: 'unclosed <think>' };
  if (opens.length === 0 && closes.length === 1) return { reason: '</think> without <think>' };
  if (opens.length === 0) return required ? { reason: 'missing <think>' } : { outside: text };
  // Exactly one of each from here on.
  const open = opens[0]!;
  const close = closes[0]!;
  if (close < open) return { reason: '</think> before <think>' };
  return { outside: text.slice(0, open) + text.slice(close + '</think>'.length) };
}

function parseBoxed(outside: string): ParsedOutput {
  const content = extractBoxedAnswer(outside);
  if (content === undefined) {
    return { valid: false, reason: /\\(boxed|fbox)/.test(outside) ? 'unclosed \\boxed{}' : 'missing \\boxed{}' };
  }
  if (content === '') return { valid: false, reason: 'empty \\boxed{}' };
  return { valid: true, action: { tag: BOXED, content } };
}

function parseTag(outside: string, format: OutputFormat): ParsedOutput {
  const tag = format.tag.toLowerCase();
  const open = `<${tag}>`;
  const close = `</${tag}>`;
  const opens = occurrences(outside, open);
  const closes = occurrences(outside, close);
  if (opens.length === 0 && closes.length === 0) return { valid: false, reason: `missing ${open}` };
  if (opens.length !== closes.length) return { valid: false, reason: `unbalanced ${open} tags` };
  if (opens.length > 1) return { valid: false, reason: `more than one ${open}` };
  // Exactly one of each from here on.
  const openAt = opens[0]!;
  const closeAt = closes[0]!;
  if (closeAt < openAt) return { valid: false, reason: `${close} before ${open}` };
  const raw = outside.slice(openAt + open.length, closeAt).trim();
  if (raw === '') return { valid: false, reason: `empty ${open}` };
  if (format.values) {
    const value = raw.toLowerCase();
    if (!format.values.includes(value)) {
      return { valid: false, reason: `${open}${raw}${close} is not one of ${format.values.join(', ')}` };
    }
    return { valid: true, action: { tag, content: value } };
  }
  return { valid: true, action: { tag, content: raw } };
}

/**
 * Parses an agent's output into its action. Invalid (never thrown): CJK characters, a malformed `<think>`, a
 * missing, empty, duplicated or unbalanced action tag, or a value outside `format.values`. Tags inside the
 * `<think>` block are ignored.
 */
export function parseTaggedOutput(text: string, format: OutputFormat, finishReason?: 'stop' | 'length'): ParsedOutput {
  const result = parseOutput(typeof text === 'string' ? text : '', format);
  if (!result.valid && finishReason === 'length') return { ...result, reason: `${result.reason} (cut at maxNewTokens)` };
  return result;
}

function parseOutput(text: string, format: OutputFormat): ParsedOutput {
  if (containsCjk(text)) return { valid: false, reason: 'contains CJK characters' };
  const think = splitThink(text, format.requireThink);
  if ('reason' in think) return { valid: false, reason: think.reason };
  return format.tag === BOXED ? parseBoxed(think.outside) : parseTag(think.outside, format);
}
