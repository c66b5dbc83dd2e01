import type { ZodType } from 'zod';
import { isPlainObject } from '../config/ConfigLayers.js';
import { REDACTED, redactUrl } from './redactUrl.js';
import { secretKindOf, type SecretKind } from './secretSchema.js';

/** A string of the config at a key marked secret. */
export interface SecretLeaf {
  path: Array<string | number>;
  kind: SecretKind;
  value: string;
}

interface SchemaDef {
  type: string;
  innerType?: ZodType;
  in?: ZodType;
  out?: ZodType;
  shape?: Record<string, ZodType>;
  catchall?: ZodType;
  valueType?: ZodType;
  element?: ZodType;
  items?: ZodType[];
  rest?: ZodType;
  options?: ZodType[];
}

/** The schemas that may validate the value under `key` of a value `schema` validates (every option of a union). */
function childSchemas(schema: ZodType, key: string | number): ZodType[] {
  const def = schema.def as SchemaDef;
  switch (def.type) {
    case 'optional':
    case 'default':
    case 'prefault':
    case 'nullable':
    case 'nonoptional':
    case 'readonly':
    case 'catch':
      return childSchemas(def.innerType!, key);
    case 'pipe':
      return [...childSchemas(def.in!, key), ...childSchemas(def.out!, key)];
    case 'union':
      return (def.options ?? []).flatMap((option) => childSchemas(option, key));
    case 'object': {
      const child = Object.hasOwn(def.shape ?? {}, key) ? def.shape![key] : def.catchall;
      return child ? [child] : [];
    }
    case 'record':
      return def.valueType ? [def.valueType] : [];
    case 'array':
      return def.element ? [def.element] : [];
    case 'tuple': {
      const item = typeof key === 'number' ? (def.items?.[key] ?? def.rest) : undefined;
      return item ? [item] : [];
    }
    default:
      return [];
  }
}

/**
 * Every string of `value` at a key `schema` marks secret, found by walking the two together (a union's options all
 * count, so `models.<id>.rollout.url` is found whichever form `rollout` takes).
 */
export function secretLeaves(schema: ZodType, value: unknown): SecretLeaf[] {
  const found: SecretLeaf[] = [];
  const visit = (schemas: ZodType[], node: unknown, path: Array<string | number>) => {
    if (typeof node === 'string') {
      const kind = schemas.map(secretKindOf).find((k) => k !== undefined);
      if (kind) found.push({ path, kind, value: node });
      return;
    }
    const entries: Array<[string | number, unknown]> = Array.isArray(node)
      ? node.map((item, i) => [i, item])
      : isPlainObject(node)
        ? Object.entries(node)
        : [];
    for (const [key, child] of entries) {
      const next = schemas.flatMap((schema) => childSchemas(schema, key));
      if (next.length) visit(next, child, [...path, key]);
    }
  };
  visit([schema], value, []);
  return found;
}

/** What a secret leaf reads as where the config leaves the process: `***`, a URL without its credentials, or the variable's name. */
export function redactedLeaf(leaf: Pick<SecretLeaf, 'kind' | 'value'>): string {
  return leaf.kind === 'value' ? REDACTED : leaf.kind === 'url' ? redactUrl(leaf.value) : leaf.value;
}

/** A copy of `value` (plain objects and arrays copied, everything else shared) with every secret leaf redacted. */
export function redactValue<T>(schema: ZodType, value: T): T {
  const leaves = secretLeaves(schema, value).filter((leaf) => leaf.kind !== 'env');
  if (leaves.length === 0) return value;
  if (leaves[0]!.path.length === 0) return redactedLeaf(leaves[0]!) as T;
  const copy = deepCopy(value);
  for (const leaf of leaves) {
    let node: unknown = copy;
    for (const part of leaf.path.slice(0, -1)) node = (node as Record<string | number, unknown>)[part];
    (node as Record<string | number, unknown>)[leaf.path.at(-1)!] = redactedLeaf(leaf);
  }
  return copy;
}

function deepCopy<T>(value: T): T {
  if (Array.isArray(value)) return value.map(deepCopy) as T;
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, deepCopy(v)])) as T;
  return value;
}
