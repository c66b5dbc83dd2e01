import { z, type ZodObject, type ZodType } from 'zod';
import { DrmasError } from '../errors/DrmasError.js';
import { BYTE_SIZE } from '../run/memoryBudget.js';

/**
 * Caps of the count settings that need no fact about the run (what the model or the memory can hold is checked at
 * `validate`): far above any sensible value, low enough that a typo (`1e9`) is refused before it allocates.
 */
export const LIMITS = Object.freeze({
  /** Training steps, checkpoint intervals, evaluation intervals. */
  steps: 10_000_000,
  /** Checkpoints kept. */
  keepLast: 10_000,
  /** Rounds per episode. */
  envRounds: 1_000,
});

/** Sections whose value is a map of named entries; a plugin's schema for them describes one entry. */
export const ENTRY_SECTIONS: Readonly<Record<string, string>> = Object.freeze({ models: 'model id', agents: 'agent role' });

const specSchema = z.union([z.string(), z.tuple([z.string()]), z.tuple([z.string(), z.unknown()]), z.looseObject({ name: z.string() })]);

/**
 * The `env` keys every environment shares. Environment plugins add their own keys to the section; an environment
 * parses `env` with this schema extended by its keys (unknown keys stripped, since other plugins' keys may be there).
 */
export const envSection = z.object({
  /** The Environment provided under this name (`math`, `search`, ...); presets set it. */
  name: z.string().min(1).optional(),
  /** Seeds task generation, splits and epoch shuffles. */
  seed: z.number().int().default(0),
  /** Rounds per episode (a round: the agents act, then the environment takes the action); each environment has its default. */
  maxRounds: z.number().int().positive().max(LIMITS.envRounds).optional(),
  /** Held-out share of a dataset or question set without its own test file. */
  testFraction: z.number().min(0).lt(1).optional(),
});
export type EnvSettings = z.output<typeof envSection>;

/**
 * Kernel keys whose value may also be an object naming, by its `kind`, the plugin engine that reads it: a plugin
 * declares that form (a strict object with `kind`, a fixed set of names, and `url`) as its schema of the key, and the
 * key takes it besides the kernel's own. `models.<id>.rollout`: an engine's name, or a server an engine samples on
 * (rollout-remote's `{ kind: 'vllm' | 'sglang', url, ... }`).
 */
const KIND_FORM_KEYS: Readonly<Record<string, readonly string[]>> = Object.freeze({ models: ['rollout'] });

/** The kind names a plugin's form of a key accepts (its `kind`: an enum or a literal). */
function formKinds(form: ZodType, owner: string, key: string): string[] {
  const shape = (form.def as { type: string; shape?: Record<string, ZodType> }).type === 'object' ? (form as ZodObject).shape : {};
  const values = (shape.kind as { _zod?: { values?: Set<unknown> } } | undefined)?._zod?.values;
  if (!values || !('url' in shape)) {
    throw new DrmasError('PLUGIN_INVALID', `plugin "${owner}" gives ${key} a form without a kind of fixed names and a url`, {
      key,
      hint: 'declare it as z.strictObject({ kind: z.enum([...names]), url: ..., ... })',
    });
  }
  return [...values].map(String);
}

/**
 * The kernel's form of a kind-form key, then each plugin's, then any object whose kind no plugin declares, which
 * passes here so that the engine lookup can name the engine and the plugin that brings it.
 */
function withKindForms(base: ZodType, forms: Array<{ plugin: string; schema: ZodType }>, key: string): ZodType {
  const claimed = new Set(forms.flatMap((form) => formKinds(form.schema, form.plugin, key)));
  // Piped into a form whose url is marked as one that may carry a credential, so it is redacted wherever the config
  // leaves the process, even before the lookup refuses the kind.
  const unclaimed = z
    .custom<{ kind: string }>(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        typeof (value as { kind?: unknown }).kind === 'string' &&
        !claimed.has((value as { kind: string }).kind),
    )
    .pipe(z.looseObject({ kind: z.string(), url: z.unknown().meta({ secret: 'url' }) }));
  return z.union([base, ...forms.map((form) => form.schema), unclaimed]).optional();
}

/**
 * `models.<id>.rollout` as a server an engine samples on: `kind` names the engine, whose plugin declares the other
 * keys (rollout-remote: `vllm`, `sglang`).
 */
export interface RolloutServer {
  kind: string;
  /** The server's base URL. */
  url: string;
  [key: string]: unknown;
}

/** The BackendFactory name `models.<id>.rollout` names (a string, or a remote engine's `kind`); undefined: the trainer samples. */
export function rolloutEngineName(rollout: string | { kind: string } | undefined): string | undefined {
  return typeof rollout === 'object' ? rollout.kind : rollout;
}

/** The config key of that name, for messages: `models.<id>.rollout`, or `.rollout.kind` for a remote engine. */
export function rolloutEngineKey(modelId: string, rollout: string | { kind: string } | undefined): string {
  return typeof rollout === 'object' ? `models.${modelId}.rollout.kind` : `models.${modelId}.rollout`;
}

/** The sections the kernel itself understands; plugins add keys to them and sections of their own. */
function coreSections(): Record<string, ZodObject> {
  return {
    trainer: z.strictObject({
      steps: z.number().int().min(0).max(LIMITS.steps).default(1),
      seed: z.number().int().default(0),
      outputDir: z.string().min(1).default('runs'),
      runName: z.string().min(1).optional(),
      saveEvery: z.number().int().min(0).max(LIMITS.steps).default(0),
      keepLast: z.number().int().min(1).max(LIMITS.keepLast).default(3),
      /**
       * Memory a step may plan to fill (`8GiB`, `512MiB`, or bytes); checked at validate against an estimate of what
       * a step holds. Default: 75% of the machine's memory, at most what a model's runtime can address (wasm: 4 GiB).
       */
      memoryBudget: z
        .union([
          z.number().int().positive(),
          z.string().regex(BYTE_SIZE, 'expected a size such as 8GiB, 512MiB or 4GB, or a number of bytes'),
        ])
        .optional(),
    }),
    eval: z.strictObject({
      every: z.number().int().min(0).max(LIMITS.steps).default(0),
      atEnd: z.boolean().default(true),
      /** Also evaluate before the first step (step 0), so a run shows where it started. */
      atStart: z.boolean().default(false),
    }),
    algorithm: z.strictObject({ advantage: z.string().min(1).optional() }),
    env: z.strictObject(envSection.shape),
    models: z.strictObject({
      /**
       * Backend that trains this model (a BackendFactory name), or `auto`: the highest-ranked engine available here
       * that trains (onnx on a CPU, tfjs where tfjs-node-gpu runs it).
       */
      backend: z.string().min(1).default('auto'),
      /**
       * The engine that samples for this model when it is not the trainer (e.g. `onnx`, or `auto`), or, in a form a
       * plugin declares, a server that samples it (`{ kind: 'vllm', url }`); weights sync after updates.
       */
      rollout: z.string().min(1).optional(),
      /** `tiny` / `small` (built in, initialised from `seed`) or a Hugging Face checkpoint folder. */
      model: z.string().min(1),
      /** Architecture of a built-in model (LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM). */
      architecture: z.string().min(1).optional(),
      /** Seed of a built-in model's initialisation (default: trainer.seed). */
      seed: z.number().int().optional(),
      /** Compute runtime of the backend (`auto` picks the best installed). */
      runtime: z.string().min(1).default('auto'),
    }),
    agents: z.strictObject({
      /** The model id (under `models`) this agent runs on; agents on one id share a worker group. */
      model: z.string().min(1).optional(),
      /** The advantage estimator of this role's rows (a name as for `algorithm.advantage`), run on them alone. */
      advantage: z.string().min(1).optional(),
    }),
  };
}

export interface SchemaContribution {
  plugin: string;
  sections: Record<string, ZodObject>;
}

/** Builds the schema of the whole config from the kernel's sections and the plugins' contributions. */
export function buildConfigSchema(contributions: SchemaContribution[]): ZodObject {
  const sections = coreSections();
  const owners = new Map<string, string>();
  const kindForms = new Map<string, Array<{ plugin: string; schema: ZodType }>>();
  for (const { plugin, sections: declared } of contributions) {
    for (const [section, given] of Object.entries(declared)) {
      const existing = sections[section];
      let schema = given;
      const forms = Object.keys(given.shape).filter((key) => KIND_FORM_KEYS[section]?.includes(key));
      if (forms.length) {
        for (const key of forms)
          kindForms.set(`${section}.${key}`, [
            ...(kindForms.get(`${section}.${key}`) ?? []),
            { plugin, schema: given.shape[key] as ZodType },
          ]);
        schema = z.strictObject(Object.fromEntries(Object.entries(given.shape).filter(([key]) => !forms.includes(key))));
      }
      if (existing) {
        for (const key of Object.keys(schema.shape)) {
          const owner = owners.get(`${section}.${key}`) ?? (key in existing.shape ? 'the kernel' : undefined);
          if (owner) {
            throw new DrmasError('DUPLICATE_NAME', `config key ${section}.${key} is declared by both ${owner} and plugin "${plugin}"`, {
              key: `${section}.${key}`,
              hint: 'two plugins claim the same option; remove one of them from the config',
            });
          }
          owners.set(`${section}.${key}`, `plugin "${plugin}"`);
        }
        sections[section] = existing.extend(schema.shape);
      } else {
        sections[section] = z.strictObject(schema.shape);
        for (const key of Object.keys(schema.shape)) owners.set(`${section}.${key}`, `plugin "${plugin}"`);
      }
    }
  }
  for (const [section, keys] of Object.entries(KIND_FORM_KEYS)) {
    const object = sections[section]!;
    const shape = Object.fromEntries(
      keys.map((key) => [
        key,
        withKindForms(
          (object.shape[key] as z.ZodOptional<ZodType>).unwrap(),
          kindForms.get(`${section}.${key}`) ?? [],
          `${section}.${key}`,
        ),
      ]),
    );
    sections[section] = object.extend(shape);
  }
  const shape: Record<string, ZodType> = {
    presets: z.array(z.string()).default([]),
    plugins: z.array(z.string()).default([]),
  };
  for (const [section, schema] of Object.entries(sections)) {
    shape[section] = section in ENTRY_SECTIONS ? z.record(z.string(), schema).default({}) : schema.prefault({});
  }
  return z.strictObject(shape);
}

/** The schema of what the user writes before presets and plugins are loaded: only `presets` and `plugins`. */
export const moduleListsSchema = z.looseObject({
  presets: z.array(specSchema).optional(),
  plugins: z.array(specSchema).optional(),
});

function unwrap(schema: ZodType): ZodType {
  let current = schema;
  for (;;) {
    const def = current.def as { type: string; innerType?: ZodType };
    if ((def.type === 'optional' || def.type === 'default' || def.type === 'prefault' || def.type === 'nullable') && def.innerType) {
      current = def.innerType;
    } else {
      return current;
    }
  }
}

/** The schema that validates the value at `path`, or undefined when the path leaves the schema. */
export function schemaAt(schema: ZodType, path: ReadonlyArray<string | number>): ZodType | undefined {
  let current: ZodType | undefined = schema;
  for (const part of path) {
    if (!current) return undefined;
    const inner = unwrap(current);
    const def = inner.def as { type: string; valueType?: ZodType; element?: ZodType };
    if (def.type === 'object') current = (inner as ZodObject).shape[String(part)] as ZodType | undefined;
    else if (def.type === 'record') current = def.valueType;
    else if (def.type === 'array') current = def.element;
    else return undefined;
  }
  return current ? unwrap(current) : undefined;
}

/** Keys an object schema at `path` accepts (for "Did you mean ...?"). */
export function knownKeysAt(schema: ZodType, path: ReadonlyArray<string | number>): string[] {
  const found = schemaAt(schema, path);
  return found && (found.def as { type: string }).type === 'object' ? Object.keys((found as ZodObject).shape) : [];
}
