import {
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  symlinkSync,
} from 'node:fs';
import path from 'node:path';
import { runNode, type CliResult } from './cliRunner.js';
import { REPO_ROOT } from './tempProject.js';

const CORE = path.join(REPO_ROOT, 'core');
const WORKSPACE_MODULES = path.join(REPO_ROOT, 'node_modules');

interface Manifest {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

function installedFolder(name: string, fromDir: string): string | undefined {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** Folders of the packages `packageDir` needs at run time (dependencies, recursively), as the workspace has them. */
function runtimeDependencies(packageDir: string, found = new Set<string>()): Set<string> {
  const manifest = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as Manifest;
  for (const [names, optional] of [
    [manifest.dependencies, false],
    [manifest.optionalDependencies, true],
  ] as const) {
    for (const name of Object.keys(names ?? {})) {
      const dir = installedFolder(name, realpathSync(packageDir));
      if (!dir) {
        if (optional) continue;
        throw new Error(`${name}, a dependency of ${packageDir}, is not installed in the workspace`);
      }
      if (found.has(dir)) continue;
      found.add(dir);
      runtimeDependencies(dir, found);
    }
  }
  return found;
}

/** Copies the tree at `source` to `target`, as hard links where the file system allows (fast, and still files). */
function copyTree(source: string, target: string): void {
  const stat = lstatSync(source);
  mkdirSync(path.dirname(target), { recursive: true });
  if (stat.isDirectory()) {
    mkdirSync(target);
    for (const entry of readdirSync(source)) copyTree(path.join(source, entry), path.join(target, entry));
  } else if (stat.isSymbolicLink()) {
    symlinkSync(readlinkSync(source), target);
  } else {
    try {
      linkSync(source, target);
    } catch {
      copyFileSync(source, target);
    }
  }
}

/**
 * Installs the built `@drmas/core` into `projectDir/node_modules` as npm would for a user: the package (bin, dist)
 * and its dependencies are copied (file by file as hard links, never as symbolic links), so everything they import
 * resolves inside the project and nothing from the workspace (its `typescript` included) is visible.
 */
export function installCore(projectDir: string): void {
  const modules = path.join(projectDir, 'node_modules');
  for (const entry of ['package.json', 'bin', 'dist']) {
    copyTree(path.join(CORE, entry), path.join(modules, '@drmas', 'core', entry));
  }
  for (const dir of runtimeDependencies(CORE)) {
    const relative = path.relative(WORKSPACE_MODULES, dir);
    if (relative.startsWith('..')) throw new Error(`${dir} is outside the workspace's node_modules`);
    if (relative.split(path.sep).includes('node_modules')) continue;
    copyTree(dir, path.join(modules, relative));
  }
}

/** Makes the workspace's package `installed` (e.g. the `typescript-7` alias) the project's `node_modules/name`. */
export function linkPackage(projectDir: string, name: string, installed: string): void {
  symlinkSync(path.join(WORKSPACE_MODULES, installed), path.join(projectDir, 'node_modules', name), 'dir');
}

/** Runs the project's own `drmas` bin (node_modules/@drmas/core/bin/drmas.js) in `cwd`. */
export function runInstalledBin(projectDir: string, args: string[], cwd = projectDir): CliResult {
  return runNode([path.join(projectDir, 'node_modules', '@drmas', 'core', 'bin', 'drmas.js'), ...args], cwd);
}
