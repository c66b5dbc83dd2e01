import path from 'node:path';
import { DrmasError } from '../errors/DrmasError.js';
import { didYouMean } from '../errors/didYouMean.js';
import type { PresetConfig, UserConfig } from '../config/UserConfig.js';
import { candidatePackageNames, isPathSpecifier, shortName, type ModuleKind } from './packageNames.js';
import { installedPackageNames, locatePackage, locatePath, type LocatedModule } from './ModuleLocator.js';
import { importModule, type ModuleImportError } from './ModuleImporter.js';
import type { AbsentPlugin } from './absentPlugins.js';
import { isPlugin, looksLikePreset, nonFunctionPhase, type Plugin, type PluginSpec, type Preset, type PresetSpec } from './Plugin.js';

/** Where a plugin or preset came from, for messages and `drmas info`. */
export interface ModuleOrigin {
  /** The name as written in the config (`search`, `./my-plugin.js`, `[inline]`). */
  request: string;
  /** Key path where it was listed, e.g. `presets[0] > plugins[2]`. */
  key: string;
  /** The config file (or preset package) that listed it. */
  listedIn: string;
  packageName?: string;
  version?: string;
  /** Absolute path of the loaded module, or `inline`. */
  resolvedFrom: string;
}

export interface LoadedPlugin extends ModuleOrigin {
  plugin: Plugin;
}

export interface LoadedPreset extends ModuleOrigin {
  preset: Preset;
}

export interface ExpandedConfig {
  presets: LoadedPreset[];
  plugins: LoadedPlugin[];
  /** Preset defaults in application order; each labelled for error messages. */
  layers: Array<{ source: string; config: PresetConfig }>;
  /** Presets' optional plugins that are not installed. */
  absent: AbsentPlugin[];
}

interface SpecParts {
  name?: string;
  options: unknown;
  inline?: unknown;
}

function splitSpec(spec: unknown, key: string, listedIn: string, kind: ModuleKind): SpecParts {
  if (typeof spec === 'string') return { name: spec, options: undefined };
  if (Array.isArray(spec) && typeof spec[0] === 'string' && spec.length <= 2) return { name: spec[0], options: spec[1] };
  if (typeof spec === 'object' && spec !== null && !Array.isArray(spec)) return { inline: spec, options: undefined };
  throw new DrmasError(
    'CONFIG_INVALID',
    `a ${kind} must be a name, a [name, options] pair or a ${kind} object; found ${JSON.stringify(spec)}`,
    {
      key,
      file: listedIn,
      hint: `write e.g. "${kind === 'plugin' ? 'algorithms' : 'math'}" or ["${kind === 'plugin' ? 'algorithms' : 'math'}", { ... }]`,
    },
  );
}

/** A preset's `presets` or `plugins` list; a preset module is code the schema does not check. */
function listIn<K extends 'presets' | 'plugins' | 'optionalPlugins'>(
  preset: Preset,
  field: K,
  key: string,
  listedIn: string,
): NonNullable<Preset[K]> {
  const list: unknown = preset[field] ?? [];
  if (!Array.isArray(list)) {
    throw new DrmasError('PRESET_INVALID', `preset "${preset.name}": \`${field}\` must be a list; found ${describeExport(list)}`, {
      key,
      file: listedIn,
      hint: `write ${field}: ["name", ...] in the preset`,
    });
  }
  return list as NonNullable<Preset[K]>;
}

function describeExport(value: unknown): string {
  if (value === undefined) return 'no default export';
  if (value === null) return 'null';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return `an object with keys ${JSON.stringify(Object.keys(value))}`;
  return `a ${typeof value}`;
}

export class PluginLoader {
  private readonly plugins: LoadedPlugin[] = [];
  private readonly presets: LoadedPreset[] = [];
  private readonly layers: ExpandedConfig['layers'] = [];
  private readonly absent: AbsentPlugin[] = [];

  /** @param baseDir folder the user's config file lives in; names and paths resolve from there. */
  constructor(
    private readonly baseDir: string,
    private readonly configFile: string,
  ) {}

  /** @param sources where each list was written when not in the config file (a `--set presets=...`), for messages. */
  async expand(
    config: Pick<UserConfig, 'presets' | 'plugins'>,
    sources: { presets?: string; plugins?: string } = {},
  ): Promise<ExpandedConfig> {
    const presets = config.presets ?? [];
    for (const [i, spec] of presets.entries()) {
      await this.loadPreset(spec, `presets[${i}]`, this.baseDir, sources.presets ?? this.configFile, []);
    }
    const plugins = config.plugins ?? [];
    for (const [i, spec] of plugins.entries()) {
      await this.loadPlugin(spec, `plugins[${i}]`, this.baseDir, sources.plugins ?? this.configFile);
    }
    return { presets: this.presets, plugins: this.plugins, layers: this.layers, absent: this.absent };
  }

  private async loadPreset(spec: PresetSpec, key: string, fromDir: string, listedIn: string, chain: string[]): Promise<void> {
    const parts = splitSpec(spec, key, listedIn, 'preset');
    let preset: Preset;
    let origin: Omit<ModuleOrigin, 'key' | 'listedIn'>;
    let presetDir = fromDir;
    if (parts.inline !== undefined) {
      preset = this.checkPreset(parts.inline, key, listedIn, '[inline]');
      origin = { request: `[inline ${preset.name}]`, resolvedFrom: 'inline' };
    } else {
      const located = this.locate(parts.name!, 'preset', fromDir, key, listedIn);
      const exported = await this.importDefault(located, 'preset', parts.name!, key, listedIn);
      const value = await this.instantiate(exported, parts.options, 'preset', parts.name!, key, listedIn);
      preset = this.checkPreset(value, key, listedIn, located.entry);
      origin = { request: parts.name!, packageName: located.packageName, version: located.version, resolvedFrom: located.entry };
      presetDir = path.dirname(located.entry);
    }
    const identity = origin.resolvedFrom === 'inline' ? `inline:${preset.name}` : origin.resolvedFrom;
    if (chain.includes(identity)) {
      throw new DrmasError('PRESET_CYCLE', `preset "${preset.name}" includes itself: ${[...chain, identity].join(' -> ')}`, {
        key,
        file: listedIn,
        hint: 'remove the preset from its own `presets` list (directly or through another preset)',
      });
    }
    const label = `preset ${preset.name}`;
    const nested = listIn(preset, 'presets', key, listedIn);
    for (const [i, spec] of nested.entries()) {
      await this.loadPreset(spec, `${key} > presets[${i}]`, presetDir, label, [...chain, identity]);
    }
    const plugins = listIn(preset, 'plugins', key, listedIn);
    for (const [i, spec] of plugins.entries()) {
      await this.loadPlugin(spec, `${key} > plugins[${i}]`, presetDir, label);
    }
    const optional = listIn(preset, 'optionalPlugins', key, listedIn);
    for (const [i, spec] of optional.entries()) {
      const at = `${key} > optionalPlugins[${i}]`;
      if (this.isInstalled(spec.name, presetDir)) await this.loadPlugin(spec.name, at, presetDir, label);
      else
        this.absent.push({
          request: spec.name,
          packageName: candidatePackageNames(spec.name, 'plugin')[0]!,
          key: at,
          listedIn: label,
          provides: spec.provides,
        });
    }
    if (preset.config) this.layers.push({ source: label, config: preset.config });
    this.presets.push({ preset, key, listedIn, ...origin });
  }

  private async loadPlugin(spec: PluginSpec, key: string, fromDir: string, listedIn: string): Promise<void> {
    const parts = splitSpec(spec, key, listedIn, 'plugin');
    let loaded: LoadedPlugin;
    if (parts.inline !== undefined) {
      const plugin = this.checkPlugin(parts.inline, key, listedIn, '[inline]');
      loaded = { plugin, key, listedIn, request: `[inline ${plugin.name}]`, resolvedFrom: 'inline' };
    } else {
      const located = this.locate(parts.name!, 'plugin', fromDir, key, listedIn);
      const exported = await this.importDefault(located, 'plugin', parts.name!, key, listedIn);
      const value = await this.instantiate(exported, parts.options, 'plugin', parts.name!, key, listedIn);
      const plugin = this.checkPlugin(value, key, listedIn, located.entry);
      loaded = {
        plugin: parts.options !== undefined && typeof exported !== 'function' ? withOptions(plugin, parts.options) : plugin,
        key,
        listedIn,
        request: parts.name!,
        packageName: located.packageName,
        version: located.version,
        resolvedFrom: located.entry,
      };
    }
    const twin = this.plugins.find(
      (p) => (p.resolvedFrom !== 'inline' && p.resolvedFrom === loaded.resolvedFrom) || p.plugin.name === loaded.plugin.name,
    );
    if (twin) {
      throw new DrmasError(
        'DUPLICATE_PLUGIN',
        `plugin "${loaded.plugin.name}" is listed twice: at ${twin.key} (in ${twin.listedIn}) and at ${key} (in ${listedIn})`,
        {
          key,
          file: listedIn,
          hint: "remove one of the two entries; to change the options of a plugin a preset brings, set them in that preset's config section instead",
        },
      );
    }
    this.plugins.push(loaded);
  }

  /** Whether plugin `name` resolves from `fromDir` (an optional plugin that does not is left out). */
  private isInstalled(name: string, fromDir: string): boolean {
    if (isPathSpecifier(name)) return locatePath(name, fromDir) !== undefined;
    return candidatePackageNames(name, 'plugin').some((candidate) => locatePackage(candidate, fromDir) !== undefined);
  }

  private locate(name: string, kind: ModuleKind, fromDir: string, key: string, listedIn: string): LocatedModule {
    if (isPathSpecifier(name)) {
      const found = locatePath(name, fromDir);
      if (found) return found;
      throw new DrmasError(
        kind === 'plugin' ? 'PLUGIN_NOT_FOUND' : 'PRESET_NOT_FOUND',
        `cannot find ${kind} "${name}": no file or package at ${path.resolve(fromDir, name)}`,
        {
          key,
          file: listedIn,
          hint: `paths are resolved from ${fromDir}; check the spelling and that the file exists`,
        },
      );
    }
    const tried = candidatePackageNames(name, kind);
    for (const candidate of tried) {
      const found = locatePackage(candidate, fromDir);
      if (found) return found;
    }
    const otherKind: ModuleKind = kind === 'plugin' ? 'preset' : 'plugin';
    const asOther = candidatePackageNames(name, otherKind)
      .filter((n) => !tried.includes(n))
      .find((candidate) => locatePackage(candidate, fromDir));
    let hint: string;
    if (asOther) {
      hint = `Did you pass a ${otherKind} as a ${kind}? "${name}" is the ${otherKind} ${asOther}: list it under \`${otherKind}s\`.`;
    } else {
      const installed = installedPackageNames(fromDir);
      const ofKind = installed
        .filter((n) => n.startsWith(`@drmas/${kind}-`) || new RegExp(`(^|/)drmas-${kind}-`).test(n))
        .map((n) => shortName(n, kind));
      const suggestion = didYouMean(name, ofKind).trim();
      // A short name is drmas's own package or a community one: name both (`math`: @drmas/preset-math, drmas-preset-math).
      const install = name.startsWith('@') || tried.length < 3 ? tried[0] : `${tried[0]}, or ${tried[1]} for a community ${kind}`;
      hint = suggestion || `install it (npm install ${install}) or give a path starting with ./`;
    }
    throw new DrmasError(
      kind === 'plugin' ? 'PLUGIN_NOT_FOUND' : 'PRESET_NOT_FOUND',
      `cannot find ${kind} "${name}"; tried ${tried.map((t) => `"${t}"`).join(', ')} from ${fromDir}`,
      { key, file: listedIn, hint },
    );
  }

  private async importDefault(located: LocatedModule, kind: ModuleKind, name: string, key: string, listedIn: string): Promise<unknown> {
    try {
      const mod = await importModule(located.entry);
      return 'default' in mod ? mod.default : mod;
    } catch (cause) {
      const failure = cause as ModuleImportError;
      throw new DrmasError(
        kind === 'plugin' ? 'PLUGIN_LOAD_FAILED' : 'PRESET_LOAD_FAILED',
        `${kind} "${name}" was found at ${located.entry} but failed to load: ${failure.message}`,
        {
          key,
          file: listedIn,
          cause: failure.cause,
          hint: failure.hint,
        },
      );
    }
  }

  private async instantiate(
    exported: unknown,
    options: unknown,
    kind: ModuleKind,
    name: string,
    key: string,
    listedIn: string,
  ): Promise<unknown> {
    if (typeof exported !== 'function') return exported;
    try {
      return await (exported as (o: unknown) => unknown)(options ?? {});
    } catch (cause) {
      throw new DrmasError(
        kind === 'plugin' ? 'PLUGIN_FAILED' : 'PRESET_LOAD_FAILED',
        `${kind} "${name}" threw while being created with options ${JSON.stringify(options ?? {})}: ${(cause as Error).message ?? cause}`,
        {
          key,
          file: listedIn,
          cause,
          hint: `check the options given at ${key}`,
        },
      );
    }
  }

  private checkPlugin(value: unknown, key: string, listedIn: string, entry: string): Plugin {
    if (isPlugin(value)) return value;
    const notAFunction = nonFunctionPhase(value);
    const hint = looksLikePreset(value)
      ? `this module exports a preset ("${value.name}"); list it under \`presets\` instead of \`plugins\``
      : notAFunction
        ? `its \`${notAFunction}\` is ${describeExport((value as Record<string, unknown>)[notAFunction])}; make it a function or leave it out`
        : 'export default a plugin object { name, register?(ctx), apply?(kernel) } (one of the two at least) or a factory (options) => plugin (see definePlugin)';
    throw new DrmasError('PLUGIN_INVALID', `${entry} is not a drmas plugin: its default export is ${describeExport(value)}`, {
      key,
      file: listedIn,
      hint,
    });
  }

  private checkPreset(value: unknown, key: string, listedIn: string, entry: string): Preset {
    if (looksLikePreset(value)) return value;
    const hint = isPlugin(value)
      ? `this module exports a plugin ("${value.name}"); list it under \`plugins\` instead of \`presets\``
      : 'export default a preset object { name, presets?, plugins?, config? } or a factory (options) => preset (see definePreset)';
    throw new DrmasError('PRESET_INVALID', `${entry} is not a drmas preset: its default export is ${describeExport(value)}`, {
      key,
      file: listedIn,
      hint,
    });
  }
}

function withOptions(plugin: Plugin, options: unknown): Plugin {
  return Object.assign(Object.create(Object.getPrototypeOf(plugin) as object) as Plugin, plugin, { options });
}
