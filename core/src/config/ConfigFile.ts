import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { cosmiconfig, type Loader } from 'cosmiconfig';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { DrmasError } from '../errors/DrmasError.js';
import { didYouMean } from '../errors/didYouMean.js';
import { importModule, type ModuleImportError } from '../plugins/ModuleImporter.js';
import { isPlainObject, type ConfigObject } from './ConfigLayers.js';

/** Where config files are looked for, in order, in the start folder and each parent up to the home folder. */
export const CONFIG_SEARCH_PLACES = Object.freeze([
  'package.json',
  '.drmasrc',
  '.drmasrc.json',
  '.drmasrc.yaml',
  '.drmasrc.yml',
  'drmas.config.ts',
  'drmas.config.mts',
  'drmas.config.cts',
  'drmas.config.mjs',
  'drmas.config.js',
  'drmas.config.json',
  'drmas.config.yaml',
  'drmas.config.yml',
]);

export interface LoadedConfigFile {
  /** Absolute path of the file, or undefined when no file was found and none was required. */
  file?: string;
  /** Folder names and relative paths in the config resolve from. */
  dir: string;
  config: ConfigObject;
}

function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `line ${line}, column ${offset - before.lastIndexOf('\n')}`;
}

const loadJson: Loader = (filepath, content) => {
  try {
    return JSON.parse(content) as unknown;
  } catch (cause) {
    const message = (cause as Error).message;
    const position = /position (\d+)/.exec(message);
    const where = position ? ` at ${lineAndColumn(content, Number(position[1]))}` : '';
    throw new DrmasError('CONFIG_LOAD_FAILED', `invalid JSON${where}: ${message}`, {
      file: filepath,
      cause,
      hint: 'fix the syntax (a trailing comma or a missing quote is the usual cause)',
    });
  }
};

const loadYaml: Loader = (filepath, content) => {
  try {
    return parseYaml(content, { prettyErrors: true }) as unknown;
  } catch (cause) {
    const where =
      cause instanceof YAMLParseError && cause.linePos ? ` at line ${cause.linePos[0].line}, column ${cause.linePos[0].col}` : '';
    throw new DrmasError('CONFIG_LOAD_FAILED', `invalid YAML${where}: ${(cause as Error).message.split('\n')[0]}`, {
      file: filepath,
      cause,
      hint: 'check the indentation and that every key ends with a colon',
    });
  }
};

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return `an instance of ${value.constructor?.name ?? 'a class'}`;
  return typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`;
}

/** JavaScript through Node's `import()`, TypeScript through the TypeScript loader (no `typescript` needed). */
const loadModule: Loader = async (filepath) => {
  let mod: Record<string, unknown>;
  try {
    mod = await importModule(filepath);
  } catch (cause) {
    const failure = cause as ModuleImportError;
    throw new DrmasError('CONFIG_LOAD_FAILED', `cannot load config: ${failure.message}`, {
      file: filepath,
      cause: failure.cause,
      hint: failure.hint,
    });
  }
  // CommonJS (`module.exports =`, TypeScript's `export =`) exports the config itself.
  const esm = (mod as { [Symbol.toStringTag]?: string })[Symbol.toStringTag] === 'Module' || Object.hasOwn(mod, '__esModule');
  if (!esm && !('default' in mod)) return mod;
  // An ES module without a default export would otherwise run with nothing but defaults.
  if (!('default' in mod)) {
    const named = Object.keys(mod);
    throw new DrmasError(
      'CONFIG_LOAD_FAILED',
      `the config module has no default export${named.length ? ` (it exports ${named.join(', ')})` : ''}`,
      {
        file: filepath,
        hint: 'end it with `export default { presets: ["math"], ... }` (or `export default defineConfig({ ... })`)',
      },
    );
  }
  if (!isPlainObject(mod.default)) {
    throw new DrmasError('CONFIG_LOAD_FAILED', `the config module's default export is ${describeValue(mod.default)}, not a config object`, {
      file: filepath,
      hint:
        typeof mod.default === 'function'
          ? 'export the object itself: `export default defineConfig({ ... })`, not a function that returns it'
          : 'export an object of sections: `export default { presets: ["math"], trainer: { steps: 10 } }`',
    });
  }
  return mod.default;
};

const LOADERS: Record<string, Loader> = {
  '.json': loadJson,
  '.yaml': loadYaml,
  '.yml': loadYaml,
  noExt: loadYaml,
  '.js': loadModule,
  '.mjs': loadModule,
  '.cjs': loadModule,
  '.ts': loadModule,
  '.mts': loadModule,
  '.cts': loadModule,
};

/** The file extensions a config loads from (`LOADERS`). */
const CONFIG_EXTENSIONS = new Set(Object.keys(LOADERS).filter((key) => key.startsWith('.')));

function explorer() {
  return cosmiconfig('drmas', {
    searchPlaces: [...CONFIG_SEARCH_PLACES],
    searchStrategy: 'global',
    // An empty config file in the folder is the one meant: reported as empty, not skipped for a parent's.
    ignoreEmptySearchPlaces: false,
    loaders: LOADERS,
  });
}

/** A data file's content as a config: an empty file is an empty config (stopped later: nothing produces rollouts). */
function asConfigObject(value: unknown, file: string): ConfigObject {
  if (value === null || value === undefined) return {};
  if (!isPlainObject(value)) {
    throw new DrmasError('CONFIG_INVALID', `a config must be an object of sections; found ${describeValue(value)}`, {
      file,
      key: '(root)',
      hint: 'write e.g. { "presets": ["math"], "trainer": { "steps": 10 } }',
    });
  }
  return value;
}

async function load(run: () => Promise<{ config: unknown; filepath: string } | null>, file?: string) {
  try {
    return await run();
  } catch (cause) {
    if (DrmasError.is(cause)) throw cause;
    throw new DrmasError('CONFIG_LOAD_FAILED', `cannot load config: ${(cause as Error).message}`, {
      file,
      cause,
      hint: 'run with --verbose for the stack trace',
    });
  }
}

/**
 * ` Did you mean "..."?` naming the files in folder `dir` of missing `file` that a config could be (by the loaders'
 * extensions) whose names are closest to its own, compared without extensions; empty where none is close.
 */
function closestConfigFiles(file: string, dir: string): string {
  const byStem = new Map<string, string>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const extension = path.extname(entry.name);
    if (entry.isFile() && CONFIG_EXTENSIONS.has(extension)) byStem.set(entry.name.slice(0, -extension.length), entry.name);
  }
  return didYouMean(path.basename(file, path.extname(file)), byStem.keys(), (stem) => byStem.get(stem)!);
}

/**
 * Loads `configPath` when given, else searches from `cwd` upwards. With `required`, finding nothing is an error.
 */
export async function loadConfigFile(options: { cwd: string; configPath?: string; required: boolean }): Promise<LoadedConfigFile> {
  if (options.configPath) {
    const file = path.resolve(options.cwd, options.configPath);
    if (!existsSync(file) || !statSync(file).isFile()) {
      const dir = path.dirname(file);
      const folder = existsSync(dir) && statSync(dir).isDirectory();
      const suggestion = folder ? closestConfigFiles(file, dir) : '';
      throw new DrmasError('CONFIG_NOT_FOUND', `config file ${file} does not exist${suggestion && `.${suggestion}`}`, {
        file,
        hint: `${folder ? '' : `the folder ${dir} does not exist either: `}check the path given to --config (it is resolved from the current folder)`,
      });
    }
    const result = await load(() => explorer().load(file), file);
    return { file, dir: path.dirname(file), config: asConfigObject(result?.config, file) };
  }
  const result = await load(() => explorer().search(options.cwd));
  if (!result) {
    if (options.required) {
      throw new DrmasError('CONFIG_NOT_FOUND', `no drmas config found in ${options.cwd} or its parents`, {
        hint: `create drmas.config.json (or one of ${CONFIG_SEARCH_PLACES.join(', ')}), or pass --config PATH`,
      });
    }
    return { dir: options.cwd, config: {} };
  }
  return { file: result.filepath, dir: path.dirname(result.filepath), config: asConfigObject(result.config, result.filepath) };
}
