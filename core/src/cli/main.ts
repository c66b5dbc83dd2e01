import { parseArgs } from 'node:util';
import { DrmasError } from '../errors/DrmasError.js';
import { didYouMean } from '../errors/didYouMean.js';
import type { CliCommand, CliIO } from './CliCommand.js';
import { discoverCommands, loadDiscoveredCommand } from './commandDiscovery.js';
import { evalCommand } from './commands/eval.js';
import { infoCommand } from './commands/info.js';
import { trainCommand } from './commands/train.js';

/** The built-in subcommands. */
export const BUILTIN_COMMANDS: readonly CliCommand[] = Object.freeze([trainCommand, evalCommand, infoCommand]);

type Listed = Pick<CliCommand, 'name' | 'summary'>;

function mainHelp(commands: readonly Listed[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'usage: drmas <command> [options]',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'global options:',
    '  -h, --help     help for drmas or a command (drmas train --help)',
    '  --verbose      print stack traces of errors',
    '  -v, --version  print the version',
  ].join('\n');
}

function commandHelp(command: CliCommand): string {
  const width = Math.max(...command.help.map(([flag]) => flag.length), 10);
  return [
    `usage: ${command.usage}`,
    '',
    command.summary,
    '',
    'options:',
    ...command.help.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`),
    `  ${'-h, --help'.padEnd(width)}  show this help`,
    `  ${'--verbose'.padEnd(width)}  print stack traces of errors`,
  ].join('\n');
}

function reportError(error: unknown, io: CliIO, verbose: boolean): number {
  if (DrmasError.is(error)) {
    io.stderr.write(`${error.format()}\n`);
    if (verbose) {
      let cause: unknown = error;
      while (cause instanceof Error) {
        io.stderr.write(`${cause.stack}\n`);
        cause = cause.cause;
      }
    }
    return 1;
  }
  const message = error instanceof Error ? error.message : String(error);
  io.stderr.write(`error INTERNAL: ${message}\n`);
  if (verbose && error instanceof Error) io.stderr.write(`${error.stack}\n`);
  else io.stderr.write('  hint: this is a bug in drmas or a plugin; run again with --verbose and report the stack trace\n');
  return 70;
}

/** Runs the CLI with `argv` (without `node` and the script); returns the exit code. */
export async function main(
  argv: string[],
  io: CliIO = { stdout: process.stdout, stderr: process.stderr, cwd: process.cwd() },
  commands: readonly CliCommand[] = BUILTIN_COMMANDS,
): Promise<number> {
  const verbose = argv.includes('--verbose');
  const args = argv.filter((a) => a !== '--verbose');
  const [name, ...rest] = args;
  if (!name || name === '-h' || name === '--help' || name === 'help') {
    io.stdout.write(`${mainHelp([...commands, ...discoverCommands(io.cwd).filter((d) => !commands.some((c) => c.name === d.name))])}\n`);
    return name ? 0 : 2;
  }
  if (name === '-v' || name === '--version') {
    const { createRequire } = await import('node:module');
    const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };
    io.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  const contributed = discoverCommands(io.cwd).filter((d) => !commands.some((c) => c.name === d.name));
  const listed: Listed[] = [...commands, ...contributed];
  let command = commands.find((c) => c.name === name);
  const discovered = contributed.find((d) => d.name === name);
  if (!command && discovered) {
    try {
      command = await loadDiscoveredCommand(discovered);
    } catch (error) {
      return reportError(error, io, verbose);
    }
  }
  if (!command) {
    io.stderr.write(
      `error: unknown command "${name}".${didYouMean(
        name,
        listed.map((c) => c.name),
      )}\n\n${mainHelp(listed)}\n`,
    );
    return 2;
  }
  if (rest.includes('-h') || rest.includes('--help')) {
    io.stdout.write(`${commandHelp(command)}\n`);
    return 0;
  }
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args: rest, options: command.options, allowPositionals: command.positionals ?? false, strict: true });
  } catch (error) {
    const flag = /'(-{1,2}[^']+)'/.exec((error as Error).message)?.[1];
    const known = Object.keys(command.options).map((o) => `--${o}`);
    const hint = flag ? didYouMean(flag, known) : '';
    io.stderr.write(`error: ${(error as Error).message}.${hint}\n\n${commandHelp(command)}\n`);
    return 2;
  }
  try {
    return await command.run(parsed, io);
  } catch (error) {
    return reportError(error, io, verbose);
  }
}
