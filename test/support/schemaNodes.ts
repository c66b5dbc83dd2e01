import type { z } from '@drmas/core';

/** One node of a config schema and the key path that reaches it (`models.<name>.rollout.url`, `env.retriever.urls[]`). */
export interface SchemaNode {
  /** Dotted; `<name>` for a record's entries, `[]` for a list's items, `[i]` for a tuple's; empty at the root. */
  path: string;
  /** zod's kind of the node: `object`, `string`, `number`, `enum`, ... (`optional`, `default` and the like are looked through). */
  type: string;
  /** The node itself, wrappers looked through. */
  schema: z.ZodType;
  /** The schema as declared there, wrappers included (metadata may sit on either). */
  declared: z.ZodType;
}

interface NodeDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  items?: z.ZodType[];
}

const WRAPPERS = new Set(['optional', 'default', 'prefault', 'nullable', 'nonoptional', 'readonly', 'catch']);

/**
 * Every node reachable from `schema`, parents before children: objects, lists, records, each option of a union, and
 * the leaves (strings, numbers, enums, ...). Wrappers are looked through, a `pipe` by its input.
 */
export function schemaNodes(schema: z.ZodType, path = '', out: SchemaNode[] = [], declared = schema): SchemaNode[] {
  const def = schema.def as unknown as NodeDef;
  if (WRAPPERS.has(def.type)) return schemaNodes(def.innerType!, path, out, declared);
  if (def.type === 'pipe') return schemaNodes(def.in!, path, out, declared);
  if (def.type === 'union') {
    for (const option of def.options ?? []) schemaNodes(option, path, out);
    return out;
  }
  out.push({ path, type: def.type, schema, declared });
  if (def.type === 'object')
    for (const [key, value] of Object.entries(def.shape ?? {})) schemaNodes(value, path ? `${path}.${key}` : key, out);
  else if (def.type === 'array') schemaNodes(def.element!, `${path}[]`, out);
  else if (def.type === 'record') schemaNodes(def.valueType!, `${path}.<name>`, out);
  else if (def.type === 'tuple') (def.items ?? []).forEach((item, i) => schemaNodes(item, `${path}[${i}]`, out));
  return out;
}
