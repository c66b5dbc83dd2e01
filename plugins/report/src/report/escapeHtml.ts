const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML and SVG element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/**
 * JSON that can sit inside `<script type="application/json">`: `<` becomes `\u003c`, so no `</script>` or `<!--`
 * can end or alter the element, and U+2028/U+2029 are escaped too. `JSON.parse` of the element's text gives the value back.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/**
 * Script or style text to inline in `<script>`/`<style>`: a `</script` or `</style` in it (inside a string literal of
 * the code) becomes `<\/script`, the same string to JavaScript, so it cannot end the element early.
 */
export function scriptText(text: string): string {
  return text.replace(/<\/(script|style)/gi, '<\\/$1');
}
