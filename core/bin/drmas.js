#!/usr/bin/env node
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  console.error(
    `drmas: ${entry.pathname} is missing: @drmas/core is not built. Run \`npm run build\` at the repository root (or reinstall the package).`,
  );
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
