import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * A scratch folder inside the repository (so packages written into it resolve `@drmas/core` through the
 * workspace's node_modules, as an installed third-party plugin would), or inside `parent` when given, removed by
 * `dispose`.
 */
export class TempProject {
  readonly dir: string;

  constructor(label: string, parent = path.join(REPO_ROOT, '.drmas-cache', 'tests')) {
    mkdirSync(parent, { recursive: true });
    this.dir = mkdtempSync(path.join(parent, `${label}-`));
  }

  /** Writes `files` (relative path -> text, or an object written as JSON). */
  write(files: Record<string, string | object>): this {
    for (const [relative, content] of Object.entries(files)) {
      const file = path.join(this.dir, relative);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`);
    }
    return this;
  }

  /** Writes an ESM package into `node_modules/<name>` whose index.js is `source`. */
  package(name: string, source: string, manifest: object = {}): this {
    return this.write({
      [`node_modules/${name}/package.json`]: { name, version: '1.2.3', type: 'module', main: 'index.js', ...manifest },
      [`node_modules/${name}/index.js`]: source,
    });
  }

  path(...parts: string[]): string {
    return path.join(this.dir, ...parts);
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
