export type JsonRecord = Record<string, unknown>;

export interface ParsedJsonLines {
  records: JsonRecord[];
  /** What was skipped and why, for the report's notes. */
  notes: string[];
}

const NON_FINITE = '\u0000drmas-non-finite:';

/**
 * JSON with the bare `NaN`, `Infinity` and `-Infinity` tokens that Python's `json.dumps` writes. They are swapped
 * for marker strings outside string literals, then turned back into numbers by the reviver.
 */
export function parseLenientJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    if (!/NaN|Infinity/.test(text)) throw error;
  }
  const marked = text.replace(/"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)/g, (match, token: string | undefined) =>
    token ? JSON.stringify(NON_FINITE + token) : match,
  );
  return JSON.parse(marked, (_key, value: unknown) =>
    typeof value === 'string' && value.startsWith(NON_FINITE) ? Number(value.slice(NON_FINITE.length)) : value,
  );
}

/**
 * Parses JSON Lines into objects. A last line without its newline that does not parse is a record cut short by a
 * killed run: it is skipped with a note. Other lines that do not parse, or are not objects, are skipped with a note too.
 */
export function parseJsonLines(text: string, fileName = 'input'): ParsedJsonLines {
  const records: JsonRecord[] = [];
  const notes: string[] = [];
  const lines = text.split('\n');
  const unterminated = lines.length > 0 && lines[lines.length - 1] !== '';
  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (!line) return;
    let value: unknown;
    try {
      value = parseLenientJson(line);
    } catch {
      const last = index === lines.length - 1 && unterminated;
      notes.push(
        last
          ? `${fileName}: skipped a partly written last line (${line.length} characters; the run was probably killed while writing it)`
          : `${fileName}: skipped line ${index + 1}, which is not valid JSON`,
      );
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      notes.push(`${fileName}: skipped line ${index + 1}, which is not a JSON object`);
      return;
    }
    records.push(value as JsonRecord);
  });
  return { records, notes };
}
