import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DrmasError } from '../errors/DrmasError.js';
import type { CliCommand } from './CliCommand.js';
import { ancestorDirs } from '../plugins/ancestorDirs.js';

/**
 * Commands contributed by installed packages. A package declares them in its manifest, so listing them needs no
 * import; the module is imported only when its command runs:
 *
 *   "drmas": { "commands": { "generate": { "module": "./dist/cli/commands.js", "summary": "sample from a model" } } }
 *
 * The module exports the `CliCommand` as a named export equal to the command name (or as `default`). A command renamed
 * in a release keeps its old name for one more as an alias that says the new one when it runs:
 *
 *   "worker": { "module": "./dist/cli/rolloutWorkerCommand.js", "renamedTo": "rollout-worker", "since": "0.2.0" }
 */
export interface DiscoveredCommand {
  name: string;
  summary: string;
  packageName: string;
  module: string;
  /** The command's new name, when `name` is its deprecated alias. */
  renamedTo?: string;
  /** The release that renamed it. */
  since?: string;
}

interface CommandSpec {
  module: string;
  summary?: string;
  renamedTo?: string;
  since?: string;
}

interface Manifest {
  name?: string;
  drmas?: { commands?: Record<string, CommandSpec> };
}

function nodeModulesDirs(from: string): string[] {
  return ancestorDirs(from)
    .map((dir) => path.join(dir, 'node_modules'))
    .filter((candidate) => existsSync(candidate));
}

function packageDirs(modules: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(modules)) {
    if (entry === '@drmas' || (entry.startsWith('@') && !entry.startsWith('.'))) {
      const scope = path.join(modules, entry);
      for (const child of readdirSync(scope)) {
        if (entry === '@drmas' || child.startsWith('drmas-')) out.push(path.join(scope, child));
      }
    } else if (entry.startsWith('drmas-')) {
      out.push(path.join(modules, entry));
    }
  }
  return out;
}

/** Finds contributed commands visible from `cwd` and from where @drmas/core itself is installed. */
export function discoverCommands(cwd: string): DiscoveredCommand[] {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const found = new Map<string, DiscoveredCommand>();
  for (const modules of [...nodeModulesDirs(cwd), ...nodeModulesDirs(here)]) {
    for (const dir of packageDirs(modules)) {
      const manifestFile = path.join(dir, 'package.json');
      if (!existsSync(manifestFile)) continue;
      let manifest: Manifest;
      try {
        manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
      } catch {
        continue;
      }
      for (const [name, spec] of Object.entries(manifest.drmas?.commands ?? {})) {
        if (found.has(name)) continue;
        found.set(name, {
          name,
          summary: spec.renamedTo
            ? `deprecated${spec.since ? ` since ${spec.since}` : ''}: the old name of ${spec.renamedTo}`
            : (spec.summary ?? `(from ${manifest.name})`),
          packageName: manifest.name ?? path.basename(dir),
          module: path.resolve(dir, spec.module),
          ...(spec.renamedTo ? { renamedTo: spec.renamedTo, since: spec.since } : {}),
        });
      }
    }
  }
  return [...found.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** Imports the command's module and returns its `CliCommand`. */
export async function loadDiscoveredCommand(discovered: DiscoveredCommand): Promise<CliCommand> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(discovered.module).href)) as Record<string, unknown>;
  } catch (cause) {
    throw new DrmasError(
      'PLUGIN_LOAD_FAILED',
      `command "${discovered.name}" of ${discovered.packageName} failed to load from ${discovered.module}: ${(cause as Error).message}`,
      {
        file: discovered.module,
        cause,
        hint: 'if it is a workspace package, run `npm run build` first',
      },
    );
  }
  const name = discovered.renamedTo ?? discovered.name;
  const command = (mod[name] ?? mod[`${name}Command`] ?? mod.default) as CliCommand | undefined;
  if (!command || typeof command.run !== 'function') {
    throw new DrmasError('PLUGIN_INVALID', `${discovered.module} does not export the command "${name}"`, {
      file: discovered.module,
      hint: `export const ${name}Command: CliCommand = { name: '${name}', ... }`,
    });
  }
  return command;
}

/** The line a deprecated alias prints before it runs: its new name. */
export function renamedCommandNotice(discovered: DiscoveredCommand): string | undefined {
  if (!discovered.renamedTo) return undefined;
  const since = discovered.since ? ` since ${discovered.since}` : '';
  return `drmas: \`drmas ${discovered.name}\` is deprecated${since} and runs \`drmas ${discovered.renamedTo}\`; use that name`;
}
