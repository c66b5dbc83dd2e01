/**
 * Plain data: what crosses from a solution's engine to the judge and to the host. The engines write a returned value
 * as JSON text with tagged nodes, walking only values of exact built-in types (own data properties in JavaScript,
 * `type(x) is int` and the like in Python), so no hook of the solution's (`toJSON`, `valueOf`, a getter, a Proxy
 * trap, `__eq__`, `__repr__`, `__iter__`) is ever called:
 *
 * - `null`, booleans, finite numbers, strings and arrays (JavaScript arrays, Python lists) as themselves;
 * - `{"$":"dict","v":[[key, value], ...]}` for objects and dicts (JavaScript keys are strings; Python's any plain value);
 * - `{"$":"tuple"|"set"|"frozenset","v":[...]}`, `{"$":"bytes","v":"<hex>"}`, `{"$":"complex","v":[re, im]}` (Python);
 * - `{"$":"float","v":"nan"|"inf"|"-inf"}`, `{"$":"bigint","v":"<digits>"}` (JavaScript's BigInt);
 * - `{"$":"ref","id":n,"type":"Foo"}`: a value that is not plain data (an instance of a class, a function, a Proxy, a
 *   generator...), which the judge may call or read through the solution's engine but never converts.
 *
 * The host reads this with `decodePlain` for `call` tests: tuples become arrays and dicts objects, as JSON writes them
 * (Python keys `1`, `True`, `None` become `"1"`, `"true"`, `"null"`), and anything JSON cannot hold (a reference, a
 * set, bytes, a dict keyed by a tuple) becomes a `NotPlainData`, equal to nothing.
 */

/** A returned value the host cannot compare: not plain data, or plain data JSON cannot hold. It equals nothing. */
export class NotPlainData {
  constructor(
    /** What it is, for the feedback: `Foo`, `set`, `bytes`. */
    readonly type: string,
  ) {}
}

type Tagged = { $: string; v?: unknown; type?: unknown };

function isTagged(value: unknown): value is Tagged {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && typeof (value as Tagged).$ === 'string';
}

/** A Python dict key as `json.dumps` writes it; undefined for a key JSON cannot hold. */
function jsonKey(key: unknown): string | undefined {
  if (typeof key === 'string') return key;
  if (typeof key === 'number') return Number.isFinite(key) ? String(key) : undefined;
  if (typeof key === 'boolean' || key === null) return String(key);
  return undefined;
}

function fromTagged(node: Tagged): unknown {
  const items: unknown[] = Array.isArray(node.v) ? node.v : [];
  switch (node.$) {
    case 'tuple':
      return items.map(fromWire);
    case 'dict': {
      const object: Record<string, unknown> = {};
      for (const entry of items) {
        const [rawKey, value] = Array.isArray(entry) ? (entry as unknown[]) : [];
        const key = jsonKey(fromWire(rawKey));
        if (key === undefined) return new NotPlainData('dict whose keys JSON cannot hold');
        Object.defineProperty(object, key, { value: fromWire(value), enumerable: true, writable: true, configurable: true });
      }
      return object;
    }
    case 'float':
      return node.v === 'nan' ? NaN : node.v === 'inf' ? Infinity : node.v === '-inf' ? -Infinity : new NotPlainData('malformed float');
    case 'bigint':
      return typeof node.v === 'string' && /^-?\d+$/.test(node.v) ? Number(node.v) : new NotPlainData('malformed bigint');
    case 'ref':
    case 'opaque':
      return new NotPlainData(typeof node.type === 'string' ? node.type : 'object');
    default:
      return new NotPlainData(node.$);
  }
}

function fromWire(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(fromWire);
  if (isTagged(value)) return fromTagged(value);
  if (value !== null && typeof value === 'object') return new NotPlainData('malformed value');
  return value;
}

/** The value an engine reported (its plain-data JSON text) as a JSON value, or `NotPlainData`. */
export function decodePlain(text: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return new NotPlainData('malformed report');
  }
  return fromWire(parsed);
}

/** A decoded value as feedback text: JSON, with `NaN`, `Infinity` and `<Foo>` for what JSON cannot write. */
export function showPlain(value: unknown): string {
  if (value instanceof NotPlainData) return `a ${value.type}, which is not plain data`;
  const text = JSON.stringify(value, (_key, v: unknown) =>
    v instanceof NotPlainData ? `<${v.type}>` : typeof v === 'number' && !Number.isFinite(v) ? String(v) : v,
  );
  return text ?? 'undefined';
}

/** A JSON value (a test's arguments) as plain-data text, for an engine to decode into its own values. */
export function encodePlain(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(encodePlain).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(([key, item]) => `[${JSON.stringify(key)},${encodePlain(item)}]`);
    return `{"$":"dict","v":[${entries.join(',')}]}`;
  }
  if (typeof value === 'number' && !Number.isFinite(value))
    return `{"$":"float","v":"${Number.isNaN(value) ? 'nan' : value > 0 ? 'inf' : '-inf'}"}`;
  return JSON.stringify(value) ?? 'null';
}
