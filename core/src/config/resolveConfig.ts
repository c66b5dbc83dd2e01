import path from 'node:path';
import type { ZodError, ZodObject } from 'zod';
import { builtinPlugins } from '../builtins/builtinPlugins.js';
import { DrmasError } from '../errors/DrmasError.js';
import { didYouMean } from '../errors/didYouMean.js';
import type { LoadedPlugin, LoadedPreset } from '../plugins/PluginLoader.js';
import { PluginLoader } from '../plugins/PluginLoader.js';
import { ConfigLayers, formatPath, isPlainObject, type ConfigObject } from './ConfigLayers.js';
import { loadConfigFile } from './ConfigFile.js';
import { buildConfigSchema, knownKeysAt, moduleListsSchema } from './configSchema.js';
import { coerceOverride, parseOverride } from './overrides.js';
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
}

export interface ConfigResolution {
  config: ResolvedConfig;
  file?: string;
  presets: LoadedPreset[];
  plugins: LoadedPlugin[];
  schema: ZodObject;
}

const MODULE_KEYS = new Set(['presets', 'plugins']);

/** Path-valued keys the kernel knows; plugins declare theirs with `configPaths`. */
const CORE_PATH_KEYS = ['models.*.model'];

/**
 * Resolves relative paths (`./x`, `../x`) under the keys matching `patterns` against the folder `baseOf` gives for
 * that key (the folder of the config file that set it); names such as `tiny` are left alone.
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
      if (typeof value !== 'string' || !/^\.\.?[\\/]/.test(value)) continue;
      const base = baseOf([...at, key]);
      if (base) node[key] = path.resolve(base, value);
    }
  };
  for (const pattern of patterns) visit(config, pattern.split('.'), []);
}

function formatIssues(error: ZodError, schema: ZodObject, layers: ConfigLayers, fallbackFile: string | undefined): DrmasError {
  const lines: string[] = [];
  let first: { key: string; file?: string; hint?: string } | undefined;
  for (const issue of error.issues) {
    const entries =
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((k) => {
            const path = [...issue.path, k] as Array<string | number>;
            const known = knownKeysAt(schema, issue.path as Array<string | number>);
            const suggestion = didYouMean(k, known);
            const listed = known.length ? ` Known keys here: ${known.join(', ')}.` : '';
            return {
              path,
              text: `unknown key.${suggestion || listed}`,
              hint: suggestion ? suggestion.trim() : `remove it, or add the plugin that declares it`,
            };
          })
        : [
            {
              path: issue.path as Array<string | number>,
              text: issue.message.replace(/^Invalid input: /, ''),
              hint: undefined as string | undefined,
            },
          ];
    for (const entry of entries) {
      const key = formatPath(entry.path) || '(root)';
      const origin = layers.originOf(entry.path) ?? fallbackFile;
      lines.push(`  - ${key}: ${entry.text}${origin ? ` (from ${origin})` : ''}`);
      first ??= { key, file: origin, hint: entry.hint };
    }
  }
  const file = first?.file?.startsWith('--set') ? undefined : first?.file;
  return new DrmasError('CONFIG_INVALID', `the config is invalid:\n${lines.join('\n')}`, {
    key: first?.key,
    file,
    hint: first?.hint ?? 'fix the keys listed above',
  });
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
  const overrides = (options.overrides ?? []).map(parseOverride);

  const lists: ConfigObject = { presets: loaded.config.presets, plugins: loaded.config.plugins };
  for (const override of overrides.filter((o) => MODULE_KEYS.has(o.path[0]))) {
    if (override.path.length !== 1) {
      throw new DrmasError(
        'CONFIG_OVERRIDE_INVALID',
        `--set ${override.path.join('.')}: set the whole list, e.g. --set plugins='["a","b"]'`,
        { key: override.path.join('.') },
      );
    }
    lists[override.path[0]] = coerceOverride(override, moduleListsSchema);
  }
  const listCheck = moduleListsSchema.safeParse(lists);
  if (!listCheck.success) {
    const layers = new ConfigLayers();
    if (fileLabel) layers.add(fileLabel, lists);
    throw formatIssues(listCheck.error, moduleListsSchema, layers, fileLabel);
  }

  const loader = new PluginLoader(loaded.dir, fileLabel ?? loaded.dir);
  const expanded = await loader.expand(lists);
  const builtins: LoadedPlugin[] = builtinPlugins().map((plugin) => ({
    plugin,
    key: '(built-in)',
    listedIn: 'drmas',
    request: plugin.name,
    resolvedFrom: '@drmas/core',
  }));
  const plugins = [...builtins, ...expanded.plugins];

  const layers = new ConfigLayers();
  for (const layer of expanded.layers) layers.add(layer.source, layer.config, MODULE_KEYS);
  layers.add(fileLabel ?? 'config', loaded.config, MODULE_KEYS);

  const schema = buildConfigSchema(
    plugins.filter((p) => p.plugin.configSchema).map((p) => ({ plugin: p.plugin.name, sections: p.plugin.configSchema! })),
  );
  for (const override of overrides.filter((o) => !MODULE_KEYS.has(o.path[0]))) {
    layers.set(override.path, coerceOverride(override, schema), `--set ${override.path.join('.')}`);
  }
  const merged = {
    ...layers.value,
    presets: expanded.presets.map((p) => p.packageName ?? p.request),
    plugins: expanded.plugins.map((p) => p.packageName ?? p.request),
  };
  const parsed = schema.safeParse(merged);
  if (!parsed.success) throw formatIssues(parsed.error, schema, layers, fileLabel);
  const config = parsed.data as ResolvedConfig;
  const patterns = [...CORE_PATH_KEYS, ...plugins.flatMap((p) => p.plugin.configPaths ?? [])];
  resolveRelativePaths(config, patterns, (key) => {
    const origin = layers.originOf(key);
    if (origin && path.isAbsolute(origin)) return path.dirname(origin);
    return origin?.startsWith('preset ') ? undefined : options.cwd;
  });
  return { config, file: loaded.file, presets: expanded.presets, plugins, schema };
}
