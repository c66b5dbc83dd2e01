const THINK_END = '</think>';
const BOX_COMMANDS = ['\\boxed', '\\fbox'] as const;

/** The final answer part of a response: the text after the last `</think>`, or all of it when there is none. */
export function finalAnswerSection(text: string): string {
  const end = text.lastIndexOf(THINK_END);
  return end < 0 ? text : text.slice(end + THINK_END.length);
}

/** Start of the last `\boxed`/`\fbox` command (not a prefix of a longer command name), or -1. */
function lastBoxStart(text: string): { start: number; length: number } | undefined {
  let best: { start: number; length: number } | undefined;
  for (const command of BOX_COMMANDS) {
    let from = text.length;
    while (from >= 0) {
      const at = text.lastIndexOf(command, from);
      if (at < 0) break;
      if (!/[a-zA-Z]/.test(text.charAt(at + command.length))) {
        if (!best || at > best.start) best = { start: at, length: command.length };
        break;
      }
      from = at - 1;
    }
  }
  return best;
}

/**
 * The content of the group opening at `open` (which must be `{`), with nested and escaped braces honoured;
 * undefined when the group never closes.
 */
export function readBraceGroup(text: string, open: number): { content: string; end: number } | undefined {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') {
      i++;
      continue;
    }
    if (ch === '{') depth++;
    else if (ch === '}') {
      depth--;
      if (depth === 0) return { content: text.slice(open + 1, i), end: i + 1 };
    }
  }
  return undefined;
}

/**
 * The content of the last `\boxed{...}` (or `\fbox{...}`, or `\boxed x` with a single token) in the final answer
 * section of `text`, trimmed. Undefined when there is none, or when the last one never closes (a truncated output).
 */
export function extractBoxedAnswer(text: string): string | undefined {
  if (typeof text !== 'string') return undefined;
  const section = finalAnswerSection(text);
  const box = lastBoxStart(section);
  if (!box) return undefined;
  let i = box.start + box.length;
  const afterName = i;
  while (i < section.length && /\s/.test(section[i]!)) i++;
  if (section[i] === '{') return readBraceGroup(section, i)?.content.trim();
  if (i === afterName) return undefined;
  const token = /^[^\s$]+/.exec(section.slice(i));
  return token ? token[0] : undefined;
}

/** Whether the answer section shows a box command, used to tell a truncated box from a missing one. */
export function hasBoxCommand(text: string): boolean {
  return lastBoxStart(finalAnswerSection(text)) !== undefined;
}
