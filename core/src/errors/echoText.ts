/**
 * How much of a client's value an error message quotes. An error that echoes a whole bad value sends back as much
 * as the client sent (15 MB for a 15 MB query); the first characters and the length are enough to find it.
 */
export const ECHO_CHARS = 80;

/** `text` if it is at most `maxChars` long, else its first `maxChars` characters, `...` and its length. */
export function echoText(text: string, maxChars = ECHO_CHARS): string {
  if (text.length <= maxChars) return text;
  let end = maxChars;
  const last = text.charCodeAt(end - 1);
  // a high surrogate at the cut would leave half a character
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}... (${text.length} chars)`;
}

/** A value as an error message quotes it: its JSON text, cut by `echoText`. */
export function echoJson(value: unknown, maxChars = ECHO_CHARS): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    // nested too deeply for JSON.stringify's recursion (RangeError), or not JSON at all (a BigInt, a cycle)
    return `(a ${Array.isArray(value) ? 'list' : typeof value} that cannot be shown as JSON)`;
  }
  return echoText(text ?? String(value), maxChars);
}
