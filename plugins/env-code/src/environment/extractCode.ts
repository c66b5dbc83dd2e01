/** Where the code of a response came from: a ``` fence, a `<code>` tag, or the whole text (after any `</think>`). */
export type CodeSource = 'fence' | 'tag' | 'text';

export interface ExtractedCode {
  code: string;
  source: CodeSource;
}

const CLOSED_FENCE = /```[^\n`]*\n([\s\S]*?)```/g;
/** An opening fence never closed: the answer was cut by a stop sequence (such as the closing fence) or the length limit. */
const OPEN_FENCE = /```[^\n`]*\n([\s\S]*)$/;
const CODE_TAG = /<code>([\s\S]*?)(?:<\/code>|$)/g;

/** Blank lines around the code dropped; the first line keeps its indentation (a Python body completing starter code). */
function keepIndent(code: string): string {
  return code.replace(/^(?:[ \t]*\r?\n)+/, '').trimEnd();
}

/**
 * The code of a model's answer, looked for after the last `</think>`: the last ``` fenced block (any info string:
 * ```js, ```python, none), a fence left open at the end, else the last `<code>...</code>` (an unclosed one runs to
 * the end), else the whole remaining text. Undefined when nothing but whitespace is left.
 */
export function extractCode(response: string): ExtractedCode | undefined {
  const text = typeof response === 'string' ? response : '';
  const thinkEnd = text.lastIndexOf('</think>');
  const answer = thinkEnd >= 0 ? text.slice(thinkEnd + '</think>'.length) : text;
  let fenced: string | undefined;
  let lastEnd = 0;
  for (const match of answer.matchAll(CLOSED_FENCE)) {
    fenced = match[1];
    lastEnd = match.index + match[0].length;
  }
  const open = OPEN_FENCE.exec(answer.slice(lastEnd));
  if (open) fenced = open[1];
  if (fenced !== undefined && fenced.trim() !== '') return { code: keepIndent(fenced), source: 'fence' };
  let tagged: string | undefined;
  for (const match of answer.matchAll(CODE_TAG)) tagged = match[1];
  if (tagged !== undefined && tagged.trim() !== '') return { code: keepIndent(tagged), source: 'tag' };
  const plain = answer.trim();
  return plain === '' ? undefined : { code: plain, source: 'text' };
}
