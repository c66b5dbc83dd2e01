import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ZodError, ZodObject } from 'zod';
import { builtinPlugins } from '../builtins/builtinPlugins.js';
import { DrmasError } from '../errors/DrmasError.js';
import { didYouMean } from '../errors/didYouMean.js';
import type { LoadedPlugin, LoadedPreset } from '../plugins/PluginLoader.js';
import { PluginLoader } from '../plugins/PluginLoader.js';
import type { AbsentPlugin } from '../plugins/absentPlugins.js';
import { ConfigLayers, formatPath, isPlainObject, type ConfigObject } from './ConfigLayers.js';
import { loadConfigFile } from './ConfigFile.js';
import { buildConfigSchema, knownKeysAt, moduleListsSchema } from './configSchema.js';
import { coerceOverride, overrideSource, parseOverride, redactedOverride } from './overrides.js';
import { redactValue } from '../secrets/secretLeaves.js';
import { renameKeysInLayer, renameKeysInOverrides } from './renamedKeys.js';
import type { ResolvedConfig } from './ResolvedConfig.js';
import type { UserConfig } from './UserConfig.js';

export interface ResolveConfigOptions {
  cwd: string;
  /** `--config PATH`; otherwise the config is searched from `cwd`. */
  configPath?: string;
  /** A config given in code instead of a file (tests, programmatic use); checked against the schema like a file. */
  inline?: UserConfig | Readonly<Record<string, unknown>>;
  /** `--set a.b.c=value` texts, applied last. */
  overrides?: string[];
  /** Whether finding no config file is an error. */
  required?: boolean;
  /** Where deprecation warnings go (a renamed key read under its old name); default: standard error. */
  warn?: (message: string) => void;
}

export interface ConfigResolution {
  config: ResolvedConfig;
  file?: string;
  /**
   * Where the user sets `key` (dotted, `agents.solver.sampling.maxNewTokens`): the config file that set it, the
   * `--set` argument, or, for a preset's default or a key nobody set, the user's config file (where it is
   * overridden); undefined without a file.
   */
  locate: (key: string) => string | undefined;
  /** The layer that set `key` or its closest ancestor: a file path, `preset <name>`, `--set <text>`, or undefined. */
  originOf: (key: string) => string | undefined;
  presets: LoadedPreset[];
  plugins: LoadedPlugin[];
  /** Presets' optional plugins that are not installed. */
  absentPlugins: AbsentPlugin[];
  schema: ZodObject;
}

const MODULE_KEYS = new Set(['presets', 'plugins']);

/** Path-valued keys the kernel knows; plugins declare theirs with `configPaths`. */
const CORE_PATH_KEYS = ['models.*.model'];

/**
 * Resolves relative paths under the keys matching `patterns` against the folder `baseOf` gives for that key (the
 * folder of the config file that set it): `./x` and `../x` always, a bare `x` or `models/x` when it names something
 * in that folder (a model folder written as `Qwen2.5-0.5B-Instruct`); other names such as `tiny` are left alone.
 */
function resolveRelativePaths(config: ConfigObject, patterns: string[], baseOf: (key: string[]) => string | undefined): void {
  const visit = (node: unknown, pattern: string[], at: string[]) => {
    const [head, ...rest] = pattern;
    if (!isPlainObject(node) || head === undefined) return;
    for (const key of head === '*' ? Object.keys(node) : [head]) {
      if (!(key in node)) continue;
      if (rest.length) {
        visit(node[key], rest, [...at, key]);
        continue;
      }
      const value = node[key];
      if (typeof value !== 'string' || value === '' || path.isAbsolute(value)) continue;
      const base = baseOf([...at, key]);
      if (base && (/^\.\.?[\\/]/.test(value) || existsSync(path.resolve(base, value)))) node[key] = path.resolve(base, value);
    }
  };
  for (const pattern of patterns) visit(config, pattern.split('.'), []);
}

/** `a.b[2].c` as path parts. */
function parseKeyPath(key: string): Array<string | number> {
  const parts: Array<string | number> = [];
  for (const match of key.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) parts.push(match[2] === undefined ? match[1]! : Number(match[2]));
  return parts;
}

/** The place a user edits to change a key that `origin` set: a file or `--set` as is; a preset's value in their file. */
function editablePlace(origin: string | undefined, userFile: string | undefined): string | undefined {
  if (origin === undefined || origin.startsWith('preset ')) return userFile;
  return origin;
}

/** The value at `path` in `value`, for messages. */
function valueAt(value: unknown, path: ReadonlyArray<string | number | symbol>): unknown {
  let current = value;
  for (const part of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string | number | symbol, unknown>)[part];
  }
  return current;
}

function shown(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) return String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** What to do about one zod issue, in the terms of the key. */
function issueHint(issue: ZodError['issues'][number]): string | undefined {
  switch (issue.code) {
    case 'too_big':
      return `use ${issue.inclusive ? 'at most' : 'less than'} ${String(issue.maximum)}`;
    case 'too_small':
      return `use ${issue.inclusive ? 'at least' : 'more than'} ${String(issue.minimum)}`;
    case 'invalid_type':
      return `give ${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`;
    case 'invalid_value':
      return `use one of: ${issue.values.map((v) => String(v)).join(', ')}`;
    default:
      return undefined;
  }
}

function formatIssues(
  error: ZodError,
  schema: ZodObject,
  layers: ConfigLayers,
  fallbackFile: string | undefined,
  input: unknown,
): DrmasError {
  const entries: Array<{ key: string; text: string; hint?: string; origin?: string }> = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) {
        const path = [...issue.path, k] as Array<string | number>;
        const known = knownKeysAt(schema, issue.path as Array<string | number>);
        const suggestion = didYouMean(k, known);
        entries.push({
          key: formatPath(path),
          text: `unknown key${suggestion ? `.${suggestion}` : known.length ? `; the keys here are ${known.join(', ')}` : ''}`,
          hint: suggestion ? suggestion.trim() : 'remove it, or add the plugin that declares it',
          origin: layers.originOf(path) ?? fallbackFile,
        });
      }
    } else {
      const path = issue.path as Array<string | number>;
      const value = valueAt(input, path);
      // A string that nearly names one of the allowed values (`gsop` for `gspo`) is named.
      const suggestion =
        issue.code === 'invalid_value' && typeof value === 'string'
          ? didYouMean(
              value,
              issue.values.map((v) => String(v)),
            )
          : '';
      entries.push({
        key: formatPath(path) || '(root)',
        text: `${issue.message.replace(/^Invalid input: /, '')}${value === undefined ? '' : `; got ${shown(value)}`}${suggestion ? `.${suggestion}` : ''}`,
        hint: suggestion ? suggestion.trim() : issueHint(issue),
        origin: layers.originOf(path) ?? fallbackFile,
      });
    }
  }
  const first = entries[0];
  const file = editablePlace(first?.origin, fallbackFile);
  const code = file?.startsWith('--set') ? 'CONFIG_OVERRIDE_INVALID' : 'CONFIG_INVALID';
  // One problem reads best on the error's own line; several are listed with where each was set.
  const message =
    entries.length === 1
      ? `${first!.key}: ${first!.text}`
      : `the config has ${entries.length} problems:\n${entries.map((e) => `  - ${e.key}: ${e.text}${e.origin ? ` (from ${e.origin})` : ''}`).join('\n')}`;
  return new DrmasError(code, message, {
    key: first?.key,
    file,
    hint:
      entries.length === 1
        ? (first!.hint ?? 'give a value of the kind the message names')
        : `${first?.hint ? `${first.key}: ${first.hint}; ` : ''}fix each key listed`,
  });
}

/** The schema of the whole config: the kernel's sections and those `plugins` declare. */
export function configSchemaOf(plugins: readonly LoadedPlugin[]): ZodObject {
  return buildConfigSchema(
    plugins.filter((p) => p.plugin.configSchema).map((p) => ({ plugin: p.plugin.name, sections: p.plugin.configSchema! })),
  );
}

/**
 * Loads the config file (or takes `inline`), expands presets and loads plugins, merges preset defaults, the
 * user's config and `--set` overrides, and validates the result against the schema the plugins declare.
 */
export async function resolveConfig(options: ResolveConfigOptions): Promise<ConfigResolution> {
  const loaded = options.inline
    ? { file: undefined, dir: options.cwd, config: options.inline as ConfigObject }
    : await loadConfigFile({ cwd: options.cwd, configPath: options.configPath, required: options.required ?? true });
  const fileLabel = loaded.file ?? (options.inline ? 'inline config' : undefined);
  const warn = options.warn ?? ((message: string) => process.stderr.write(`drmas: ${message}\n`));
  const overrides = renameKeysInOverrides((options.overrides ?? []).map(parseOverride), overrideSource, warn);

  const lists: ConfigObject = { presets: loaded.config.presets, plugins: loaded.config.plugins };
  const listSources: { presets?: string; plugins?: string } = {};
  for (const override of overrides.filter((o) => MODULE_KEYS.has(o.path[0]))) {
    if (override.path.length !== 1) {
      throw new DrmasError('CONFIG_OVERRIDE_INVALID', `${override.path[0]} can only be set as a whole list`, {
        key: override.path.join('.'),
        file: overrideSource(override),
        hint: `write e.g. --set ${override.path[0]}='["a","b"]'`,
      });
    }
    lists[override.path[0]] = coerceOverride(override, moduleListsSchema);
    listSources[override.path[0] as 'presets' | 'plugins'] = overrideSource(override);
  }
  const listCheck = moduleListsSchema.safeParse(lists);
  if (!listCheck.success) {
    const layers = new ConfigLayers();
    if (fileLabel) layers.add(fileLabel, { presets: loaded.config.presets, plugins: loaded.config.plugins });
    for (const override of overrides.filter((o) => MODULE_KEYS.has(o.path[0])))
      layers.set(override.path, lists[override.path[0]], overrideSource(override));
    throw formatIssues(listCheck.error, moduleListsSchema, layers, fileLabel, lists);
  }

  const loader = new PluginLoader(loaded.dir, fileLabel ?? loaded.dir);
  const expanded = await loader.expand(lists, listSources);
  const builtins: LoadedPlugin[] = builtinPlugins().map((plugin) => ({
    plugin,
    key: '(built-in)',
    listedIn: 'drmas',
    request: plugin.name,
    resolvedFrom: '@drmas/core',
  }));
  const plugins = [...builtins, ...expanded.plugins];

  const layers = new ConfigLayers();
  for (const layer of expanded.layers) layers.add(layer.source, renameKeysInLayer(layer.config, layer.source, warn), MODULE_KEYS);
  layers.add(fileLabel ?? 'config', renameKeysInLayer(loaded.config, fileLabel ?? 'config', warn), MODULE_KEYS);

  const schema = configSchemaOf(plugins);
  for (const override of overrides.filter((o) => !MODULE_KEYS.has(o.path[0]))) {
    const shown = redactedOverride(override, schema);
    layers.set(override.path, coerceOverride(shown, schema), overrideSource(shown));
  }
  const merged = {
    ...layers.value,
    presets: expanded.presets.map((p) => p.packageName ?? p.request),
    plugins: expanded.plugins.map((p) => p.packageName ?? p.request),
  };
  const parsed = schema.safeParse(merged);
  // The values the messages quote are those the config may show: a secret key's redacted.
  if (!parsed.success) throw formatIssues(parsed.error, schema, layers, fileLabel, redactValue(schema, merged));
  const config = parsed.data as ResolvedConfig;
  const patterns = [...CORE_PATH_KEYS, ...plugins.flatMap((p) => p.plugin.configPaths ?? [])];
  resolveRelativePaths(config, patterns, (key) => {
    const origin = layers.originOf(key);
    if (origin && path.isAbsolute(origin)) return path.dirname(origin);
    return origin?.startsWith('preset ') ? undefined : options.cwd;
  });
  const originOf = (key: string) => layers.originOf(parseKeyPath(key));
  const locate = (key: string) => editablePlace(originOf(key), fileLabel);
  return { config, file: loaded.file, locate, originOf, presets: expanded.presets, plugins, absentPlugins: expanded.absent, schema };
}
