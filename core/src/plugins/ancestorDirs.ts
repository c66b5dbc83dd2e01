import path from 'node:path';

/** `from` (resolved) and each folder above it, up to the root: where Node looks for `node_modules` and package.json. */
export function ancestorDirs(from: string): string[] {
  const dirs: string[] = [];
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    dirs.push(dir);
    if (path.dirname(dir) === dir) return dirs;
  }
}
