import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Jiti } from 'jiti';
import { ancestorDirs } from './ancestorDirs.js';

const TYPESCRIPT_FILE = /\.[cm]?ts$/;

let loader: Promise<Jiti> | undefined;

/**
 * jiti strips types with Babel (no type-check; legacy decorators and their metadata, as `experimentalDecorators`
 * gives) and imports the ESM JavaScript a TypeScript file depends on with Node's own `import()`, so a TS plugin
 * shares `@drmas/core`'s module instance (tokens, `@agent` metadata) with the kernel that loads it. It does not
 * need the project's `typescript`, whatever its version.
 */
function typescriptLoader(): Promise<Jiti> {
  loader ??= import('jiti').then(({ createJiti }) => createJiti(import.meta.url));
  return loader;
}

/** Why a module did not load, in the terms of the file a person fixes. */
export class ModuleImportError extends Error {
  override readonly name = 'ModuleImportError';

  constructor(
    message: string,
    readonly hint: string,
    cause: unknown,
  ) {
    super(message, { cause });
  }
}

interface ThrownValue {
  name?: string;
  message?: string;
  code?: string;
  stack?: string;
  requireStack?: string[];
}

function asThrown(value: unknown): ThrownValue {
  return typeof value === 'object' && value !== null ? value : { message: String(value) };
}

function shown(file: string, entry: string): string {
  return file === entry ? '' : ` in ${file}`;
}

/** The offending line with a caret under `column` (1-based), as Babel and Jest print it. */
function codeFrame(file: string, line: number, column: number): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').split(/\r?\n/)[line - 1] ?? '';
  } catch {
    return '';
  }
  const gutter = String(line);
  const pad = text.slice(0, column - 1).replace(/[^\t]/g, ' ');
  return `\n  ${gutter} | ${text}\n  ${' '.repeat(gutter.length)} | ${pad}^`;
}

/** jiti reports a Babel failure as `<code>: <message> \n <file>:<line>:<column>`, the column 0-based. */
const JITI_TRANSFORM_ERROR = /^(\w+): ([\s\S]*?)\s*\n (.+):(\d+):(\d+)$/;
const NOT_FOUND = /Cannot find (?:module|package) '([^']+)'(?: imported from (.+))?/;
const MISSING_EXPORT = /The requested module '([^']+)' does not provide an export named '([^']+)'/;
/** What Node says when a `.js` file written as an ES module is loaded as CommonJS (no `"type": "module"` above it). */
const ESM_AS_COMMONJS = /Cannot use import statement outside a module|Unexpected token 'export'/;
const STACK_LOCATION = /\(?((?:file:\/\/)?[^\s()]+):(\d+):(\d+)\)?$/;

function missingImport(request: string, importer: string | undefined, entry: string): [message: string, hint: string] {
  const from = importer ? `, imported by ${importer.startsWith('file:') ? fileURLToPath(importer) : importer}` : '';
  const relative = request.startsWith('.') || request.startsWith('/') || request.startsWith('file:');
  const hint = relative
    ? `check the path: it resolves from the folder of the file that imports it${importer ? '' : ` (${path.dirname(entry)})`}`
    : `install it in the project (npm install ${request.startsWith('@') ? request.split('/').slice(0, 2).join('/') : request.split('/')[0]}) or fix the import`;
  return [`cannot find "${request}"${from}`, hint];
}

/** The length of `file`'s line `line` (1-based), or undefined when it cannot be read. */
function lineLength(file: string, line: number): number | undefined {
  try {
    return readFileSync(file, 'utf8').split(/\r?\n/)[line - 1]?.length;
  } catch {
    return undefined;
  }
}

/**
 * Where a thrown error comes from: the first stack frame in the user's own files, else the first outside Node's
 * internals and jiti.
 */
function throwLocation(stack: string | undefined): string {
  const frames: string[] = [];
  for (const line of (stack ?? '').split('\n').slice(1)) {
    const [, file, lineNumber, column] = STACK_LOCATION.exec(line.trim()) ?? [];
    if (file === undefined || file.startsWith('node:') || /[\\/]node_modules[\\/]jiti[\\/]/.test(file)) continue;
    const path = file.startsWith('file:') ? fileURLToPath(file) : file;
    // jiti evaluates a TypeScript file inside a wrapper that shares its first line: a column past that line's end
    // counts the wrapper, so only the line is certain.
    const length = Number(lineNumber) === 1 ? lineLength(path, 1) : undefined;
    frames.push(length !== undefined && Number(column) > length + 1 ? `${path}:${lineNumber}` : `${path}:${lineNumber}:${column}`);
  }
  const frame = frames.find((f) => !/[\\/]node_modules[\\/]/.test(f)) ?? frames[0];
  return frame ? ` (${frame})` : '';
}

function explain(cause: unknown, entry: string): ModuleImportError {
  const thrown = asThrown(cause);
  const message = thrown.message ?? String(cause);
  const transform = JITI_TRANSFORM_ERROR.exec(message);
  if (transform) {
    const [, code, reason, file, line, column] = transform;
    if (code === 'ParseError' && file !== undefined && Number(line) > 0) {
      const col = Number(column) + 1;
      return new ModuleImportError(
        `syntax error${shown(file, entry)} at line ${line}, column ${col}: ${reason}${codeFrame(file, Number(line), col)}`,
        'fix the syntax there; TypeScript types are erased without being checked, so only syntax stops a file from loading',
        cause,
      );
    }
    return new ModuleImportError(
      `cannot transpile ${file}: ${reason}`,
      'the TypeScript loader (jiti, with Babel) does not support this construct: rewrite it, or compile the file with tsc and load the .js',
      cause,
    );
  }
  const notFound = thrown.code === 'MODULE_NOT_FOUND' || thrown.code === 'ERR_MODULE_NOT_FOUND' ? NOT_FOUND.exec(message) : null;
  if (notFound) {
    // Group 1 is not optional, so a match has it.
    const [text, hint] = missingImport(notFound[1]!, notFound[2] ?? thrown.requireStack?.[0], entry);
    return new ModuleImportError(text, hint, cause);
  }
  if (thrown.name === 'SyntaxError' && ESM_AS_COMMONJS.test(message) && entry.endsWith('.js')) {
    const manifest = nearestPackageJson(path.dirname(entry));
    return new ModuleImportError(
      `it is written as an ES module (import/export), but Node loads it as CommonJS: ${
        manifest ? `${manifest} does not say "type": "module"` : 'no package.json above it says "type": "module"'
      }`,
      `rename the file to .mjs, or add "type": "module" to ${manifest ?? 'a package.json in its folder'}`,
      cause,
    );
  }
  const missingExport = thrown.name === 'SyntaxError' ? MISSING_EXPORT.exec(message) : null;
  if (missingExport) {
    return new ModuleImportError(
      `"${missingExport[1]}" has no export named "${missingExport[2]}"`,
      'check the name against what that module exports (and its version)',
      cause,
    );
  }
  const location = throwLocation(thrown.stack);
  if (thrown.name === 'SyntaxError' && !location) {
    return new ModuleImportError(
      `syntax error: ${message}`,
      `fix the syntax; \`node --check ${entry}\` shows the line (if it is not there, it is in a file this one imports)`,
      cause,
    );
  }
  return new ModuleImportError(
    `it threw while being evaluated: ${thrown.name ? `${thrown.name}: ` : ''}${message}${location}`,
    "the error comes from the module's own top-level code; run with --verbose for the stack trace",
    cause,
  );
}

/** The package.json that decides how Node loads the `.js` files of `dir`: the nearest one at or above it. */
function nearestPackageJson(dir: string): string | undefined {
  return ancestorDirs(dir)
    .map((at) => path.join(at, 'package.json'))
    .find((manifest) => existsSync(manifest));
}

/**
 * Where a JavaScript file's syntax error is: Node's `import()` names neither line nor column, so the file is parsed
 * again with jiti's Babel transform, which reports both (as `exports.__JITI_ERROR__ = {...}`).
 */
async function locateSyntaxError(file: string): Promise<ModuleImportError | undefined> {
  try {
    const source = readFileSync(file, 'utf8');
    const output = (await typescriptLoader()).transform({ source, filename: file });
    const match = /__JITI_ERROR__ = (\{.*\})/.exec(output);
    if (!match) return undefined;
    const located = JSON.parse(match[1]!) as { line: number; column: number; message: string };
    const column = located.column + 1;
    return new ModuleImportError(
      `syntax error at line ${located.line}, column ${column}: ${located.message.trim()}${codeFrame(file, located.line, column)}`,
      'fix the syntax there',
      undefined,
    );
  } catch {
    return undefined;
  }
}

/**
 * Imports `file` (absolute): TypeScript (`.ts`, `.mts`, `.cts`) through jiti, created on the first such file,
 * anything else through Node's `import()`. A failure is a `ModuleImportError` saying what to fix where.
 */
export async function importModule(file: string): Promise<Record<string, unknown>> {
  if (!existsSync(file)) {
    throw new ModuleImportError(
      'the file does not exist',
      'a package.json names it as the entry: if it is a workspace package, run `npm run build` first, else reinstall the package',
      undefined,
    );
  }
  try {
    if (TYPESCRIPT_FILE.test(file)) return await (await typescriptLoader()).import<Record<string, unknown>>(file);
    return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (cause) {
    const thrown = asThrown(cause);
    // A SyntaxError is the file's syntax unless parsing it succeeds (then its code threw one, e.g. JSON.parse).
    if (thrown.name === 'SyntaxError' && !TYPESCRIPT_FILE.test(file) && !MISSING_EXPORT.test(thrown.message ?? '')) {
      const located = await locateSyntaxError(file);
      if (located) throw new ModuleImportError(located.message, located.hint, cause);
    }
    throw explain(cause, file);
  }
}
