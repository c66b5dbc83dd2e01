import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ancestorDirs } from './ancestorDirs.js';

export interface LocatedModule {
  /** Absolute path of the module's entry file. */
  entry: string;
  packageName?: string;
  version?: string;
  /** Absolute path of the package folder (or the file itself for a path specifier). */
  location: string;
}

interface PackageJson {
  name?: string;
  version?: string;
  main?: string;
  module?: string;
  exports?: unknown;
}

const CONDITIONS = ['import', 'node', 'default'];

function resolveExportTarget(target: unknown): string | undefined {
  if (typeof target === 'string') return target;
  if (Array.isArray(target)) {
    for (const item of target) {
      const found = resolveExportTarget(item);
      if (found) return found;
    }
    return undefined;
  }
  if (target && typeof target === 'object') {
    for (const [condition, value] of Object.entries(target)) {
      if (CONDITIONS.includes(condition)) {
        const found = resolveExportTarget(value);
        if (found) return found;
      }
    }
  }
  return undefined;
}

/** Built JavaScript is preferred to a TypeScript source of the same name. */
const FILE_SUFFIXES = ['', '.js', '.mjs', '.cjs', '.ts', '.mts', '.cts', '/index.js', '/index.mjs', '/index.ts', '/index.mts'];

function findFile(base: string): string | undefined {
  for (const suffix of FILE_SUFFIXES) {
    const file = base + suffix;
    if (existsSync(file) && statSync(file).isFile()) return file;
  }
  return undefined;
}

function packageEntry(dir: string, pkg: PackageJson): string | undefined {
  if (pkg.exports !== undefined) {
    const exportsField = pkg.exports as Record<string, unknown> | string;
    const root = typeof exportsField === 'object' && !Array.isArray(exportsField) && '.' in exportsField ? exportsField['.'] : exportsField;
    const target = resolveExportTarget(root);
    return target ? path.join(dir, target) : undefined;
  }
  for (const field of [pkg.module, pkg.main, 'index']) {
    if (!field) continue;
    const file = findFile(path.join(dir, field));
    if (file) return file;
  }
  return undefined;
}

/** Finds a package the way Node does (walking up `node_modules` folders) and returns its ESM entry. */
export function locatePackage(name: string, fromDir: string): LocatedModule | undefined {
  for (const dir of ancestorDirs(fromDir)) {
    const candidate = path.join(dir, 'node_modules', name);
    const manifest = path.join(candidate, 'package.json');
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as PackageJson;
      const entry = packageEntry(candidate, pkg);
      if (entry) return { entry, packageName: pkg.name ?? name, version: pkg.version, location: candidate };
    }
  }
  return undefined;
}

/** Resolves a relative or absolute path specifier: a file, or a folder with a package.json or index file. */
export function locatePath(specifier: string, fromDir: string): LocatedModule | undefined {
  const base = path.resolve(fromDir, specifier.startsWith('file:') ? new URL(specifier).pathname : specifier);
  if (existsSync(path.join(base, 'package.json'))) {
    const pkg = JSON.parse(readFileSync(path.join(base, 'package.json'), 'utf8')) as PackageJson;
    const entry = packageEntry(base, pkg);
    if (entry) return { entry, packageName: pkg.name, version: pkg.version, location: base };
  }
  const file = findFile(base);
  return file ? { entry: file, location: file } : undefined;
}

/** Installed package names visible from `fromDir`, for "Did you mean ...?" hints. */
export function installedPackageNames(fromDir: string): string[] {
  const names = new Set<string>();
  for (const dir of ancestorDirs(fromDir)) {
    const modules = path.join(dir, 'node_modules');
    if (existsSync(modules)) {
      for (const entry of readdirSync(modules)) {
        if (entry.startsWith('.')) continue;
        if (entry.startsWith('@')) {
          for (const scoped of readdirSync(path.join(modules, entry))) names.add(`${entry}/${scoped}`);
        } else {
          names.add(entry);
        }
      }
    }
  }
  return [...names];
}
