import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './tempProject.js';

/** The package name of every plugin of the workspace (`plugins/*`), so a check over all plugins covers a new one too. */
export function workspacePlugins(): string[] {
  return readdirSync(path.join(REPO_ROOT, 'plugins'))
    .filter((dir) => existsSync(path.join(REPO_ROOT, 'plugins', dir, 'package.json')))
    .map((dir) => (JSON.parse(readFileSync(path.join(REPO_ROOT, 'plugins', dir, 'package.json'), 'utf8')) as { name: string }).name);
}
