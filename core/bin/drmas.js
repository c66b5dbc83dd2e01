#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dist = (file) => new URL(`../dist/cli/${file}`, import.meta.url);
const entry = dist('main.js');
if (!existsSync(entry)) {
  console.error(
    `drmas: ${entry.pathname} is missing: @drmas/core is not built. Run \`npm run build\` at the repository root (or reinstall the package).`,
  );
  process.exit(1);
}
const argv = process.argv.slice(2);
const malloc = await import(dist('mallocRelaunch.js').href);
// Under glibc the command runs with a fixed mmap threshold, which must be set before the process starts.
if (malloc.processExecve() && malloc.wantsMallocThreshold()) malloc.relaunchWithMallocThreshold(fileURLToPath(import.meta.url), argv);
const { main } = await import(entry.href);
process.exitCode = await main(argv);
