import type { ZodObject, ZodType } from 'zod';
import { DrmasError } from '../errors/DrmasError.js';
import { closestMatches, didYouMean } from '../errors/didYouMean.js';
import { redactedLeaf, secretLeaves } from '../secrets/secretLeaves.js';
import { redactUrlsInText } from '../secrets/redactUrl.js';
import { schemaAt } from './configSchema.js';

export interface Override {
  /** The dotted key, split; never empty. */
  path: [string, ...string[]];
  raw: string;
  /** The whole `--set` argument as the user wrote it, for messages. */
  text: string;
}

/** Where a `--set` value comes from, as messages name it (in the place of a file). */
export function overrideSource(override: Pick<Override, 'text'>): string {
  return `--set ${override.text}`;
}

const KEY_PART = /^[\w$-]+$/;

/** Parses `a.b.c=value` (from `--set`). */
export function parseOverride(text: string): Override {
  const eq = text.indexOf('=');
  const keyText = eq === -1 ? text : text.slice(0, eq);
  const [head, ...rest] = keyText.split('.');
  if (eq === -1 || !head || ![head, ...rest].every((part) => KEY_PART.test(part))) {
    const shown = redactUrlsInText(text);
    throw new DrmasError(
      'CONFIG_OVERRIDE_INVALID',
      `--set expects KEY=VALUE with a dotted key of names; got "${shown}"${eq === -1 ? ' (no =)' : ''}`,
      {
        file: `--set ${shown}`,
        key: keyText.trim() || '--set',
        hint: 'write e.g. --set trainer.steps=3 (no spaces around the key)',
      },
    );
  }
  return { path: [head, ...rest], raw: text.slice(eq + 1), text };
}

/**
 * The override as messages name it (`--set <text>`): the value of a key the schema marks secret redacted
 * (`--set bullmq.redisUrl=redis://***@cache:6379`), and the user info of any URL in the others.
 */
export function redactedOverride(override: Override, schema: ZodType): Override {
  const nested = override.path.reduceRight<unknown>((value, key) => ({ [key]: value }), override.raw);
  const [leaf] = secretLeaves(schema, nested);
  const text = leaf ? `${override.path.join('.')}=${redactedLeaf(leaf)}` : redactUrlsInText(override.text);
  return text === override.text ? override : { ...override, text };
}

const INTEGER = /^[-+]?\d+$/;
// `\d+(?:\.\d*)?`, not `\d+\.?\d*`: the two digit runs of the latter split a long run in every way before failing
// (quadratic backtracking: 8 s for 64 KB of digits and a letter).
const DECIMAL = /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;

/** The parts of a zod definition these functions read (zod types `def` per schema kind). */
interface SchemaDef {
  type: string;
  valueType?: ZodType;
  element?: ZodType;
  entries?: Record<string, string | number>;
  values?: unknown[];
  options?: ZodType[];
  catchall?: ZodType;
}

function defOf(schema: ZodType): SchemaDef {
  return schema.def;
}

function typeOf(schema: ZodType | undefined): string | undefined {
  return schema ? defOf(schema).type : undefined;
}

function unwrapped(schema: ZodType): ZodType {
  return schemaAt(schema, []) ?? schema;
}

function fail(override: Override, expected: string, example: string, suggestion = ''): never {
  const key = override.path.join('.');
  throw new DrmasError(
    'CONFIG_OVERRIDE_INVALID',
    `${key} expects ${expected}; got ${JSON.stringify(override.raw)}${suggestion ? `.${suggestion}` : ''}`,
    {
      file: overrideSource(override),
      key,
      hint: `write e.g. --set ${key}=${example}`,
    },
  );
}

function enumValues(schema: ZodType): string[] {
  return Object.values(defOf(schema).entries ?? {}).map(String);
}

/**
 * The schema at the override's key, or an error naming the first part of the key that the schema does not have
 * (with a "Did you mean"). Keys below a value of unknown shape (a plugin's options) are not checked.
 */
function targetSchema(override: Override, schema: ZodType): ZodType | undefined {
  let current: ZodType = schema;
  for (let i = 0; i < override.path.length; i++) {
    const inner = unwrapped(current);
    const type = typeOf(inner);
    const part = override.path[i]!;
    let next: ZodType | undefined;
    if (type === 'object') {
      const shape = (inner as ZodObject).shape;
      next = Object.hasOwn(shape, part) ? (shape[part] as ZodType) : undefined;
      if (!next) {
        const catchall = defOf(inner).catchall;
        if (catchall && typeOf(catchall) !== 'never') return undefined;
        const where = override.path.slice(0, i).join('.');
        const known = Object.keys(shape);
        throw new DrmasError(
          'CONFIG_OVERRIDE_INVALID',
          `unknown key ${[...override.path.slice(0, i), part].join('.')}; ${where || 'the config'} has ${known.join(', ')}.${didYouMean(part, known)}`,
          {
            file: overrideSource(override),
            key: override.path.join('.'),
            hint: didYouMean(part, known).trim() || `the keys here are: ${known.join(', ')}; a plugin's keys exist once it is listed`,
          },
        );
      }
    } else if (type === 'record') {
      next = defOf(inner).valueType;
    } else if (type === 'array') {
      if (!INTEGER.test(part)) fail(override, 'a list index', '0');
      next = defOf(inner).element;
    } else {
      return undefined;
    }
    if (!next) return undefined;
    current = next;
  }
  return unwrapped(current);
}

/** A scalar from text, strictly by the schema's type: undefined when the text is not such a value. */
function parseScalar(text: string, schema: ZodType): { value: unknown } | undefined {
  const type = typeOf(schema);
  switch (type) {
    case 'string':
      return { value: text };
    case 'enum': {
      const value = Object.values(defOf(schema).entries ?? {}).find((v) => String(v) === text);
      return value === undefined ? undefined : { value };
    }
    case 'literal': {
      const found = (defOf(schema).values ?? []).find((v) => String(v) === text);
      return found === undefined ? undefined : { value: found };
    }
    case 'number': {
      const integer = (schema as unknown as { isInt?: boolean }).isInt === true;
      if (!(integer ? INTEGER : DECIMAL).test(text)) return undefined;
      const value = Number(text);
      return Number.isFinite(value) ? { value } : undefined;
    }
    case 'boolean':
      return text === 'true' ? { value: true } : text === 'false' ? { value: false } : undefined;
    case 'union': {
      for (const option of defOf(schema).options ?? []) {
        const parsed = parseScalar(text, unwrapped(option));
        // A string option takes anything: try the others first.
        if (parsed && typeOf(unwrapped(option)) !== 'string') return parsed;
      }
      const stringOption = (defOf(schema).options ?? []).find((o) => typeOf(unwrapped(o)) === 'string');
      return stringOption ? { value: text } : undefined;
    }
    default:
      return undefined;
  }
}

function expectation(schema: ZodType): [expected: string, example: string] {
  switch (typeOf(schema)) {
    case 'enum': {
      const values = enumValues(schema);
      return [`one of ${values.join(', ')}`, values[0] ?? ''];
    }
    case 'literal': {
      const values = (defOf(schema).values ?? []).map(String);
      return [values.join(', or '), values[0] ?? ''];
    }
    case 'number':
      return (schema as unknown as { isInt?: boolean }).isInt === true
        ? ['a whole number written in decimal digits', '3']
        : ['a finite number such as 0.5 or 1e-4', '0.5'];
    case 'boolean':
      return ['true or false', 'true'];
    case 'union': {
      const options = (defOf(schema).options ?? []).map((option) => expectation(unwrapped(option)));
      return [options.map(([expected]) => expected).join(', or '), options[0]?.[1] ?? ''];
    }
    case 'object':
    case 'record':
      return ['a JSON object', '{}'];
    default:
      return ['JSON', '[]'];
  }
}

/** The best guess for a value whose schema says nothing (`3` -> number, `true` -> boolean, `[1,2]` -> array). */
function guess(raw: string): unknown {
  const text = raw.trim();
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text === 'null') return null;
  if (DECIMAL.test(text)) return Number(text);
  if (/^[[{"]/.test(text)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return raw;
    }
  }
  return raw;
}

/**
 * Turns the text of an override into a value of the type the schema expects at its key, strictly: whole numbers in
 * decimal digits for integers (not `0x10`, `1e3`, ` 5` or `5abc`), finite numbers, `true`/`false`, an enum's own
 * values; JSON (or a comma list, bracketed or not) for arrays, JSON for objects. An unknown key is an error naming `--set`. Where the
 * schema says nothing (a plugin's options), a best guess.
 */
export function coerceOverride(override: Override, schema: ZodType | undefined): unknown {
  const target = schema ? targetSchema(override, schema) : undefined;
  if (!target) return guess(override.raw);
  const type = typeOf(target);
  if (type === 'array' || type === 'object' || type === 'record' || type === 'tuple') {
    try {
      return JSON.parse(override.raw) as unknown;
    } catch {
      if (type !== 'array') fail(override, 'a JSON object', '{}');
      const element = unwrapped(defOf(target).element ?? target);
      // A bracketed list that is not JSON (`[math, dapo]`, as YAML writes it) reads as its items, spaces around them dropped.
      const bracketed = /^\[(.*)\]$/s.exec(override.raw)?.[1];
      if (override.raw === '' || bracketed?.trim() === '') return [];
      const items = bracketed === undefined ? override.raw.split(',') : bracketed.split(',').map((item) => item.trim());
      return items.map((item) => {
        const parsed = parseScalar(item, element);
        if (!parsed) fail(override, `a JSON list, or items separated by commas, each ${expectation(element)[0]}`, '[1,2]');
        return parsed.value;
      });
    }
  }
  const parsed = parseScalar(override.raw, target);
  if (parsed) return parsed.value;
  // A union with an object option (`true`, or `{"inflationEvery": 5}`) takes JSON for that option.
  const structured =
    type === 'union' && (defOf(target).options ?? []).some((o) => ['object', 'record', 'array'].includes(typeOf(unwrapped(o)) ?? ''));
  if (structured && /^[[{]/.test(override.raw.trim())) {
    try {
      return JSON.parse(override.raw) as unknown;
    } catch {
      // Not JSON: the message below says what the key takes.
    }
  }
  if (type === 'enum') {
    // A near miss of one of the values (`gsop` for `gspo`) is named, and the example is that value.
    const [closest] = closestMatches(override.raw, enumValues(target));
    const [expected, example] = expectation(target);
    fail(override, expected, closest ?? example, closest ? didYouMean(override.raw, enumValues(target)) : '');
  }
  if (['string', 'literal', 'number', 'boolean', 'union'].includes(type ?? '')) fail(override, ...expectation(target));
  return guess(override.raw);
}
