import { parseArgs } from 'node:util';
import { DrmasError } from '../errors/DrmasError.js';
import { didYouMean } from '../errors/didYouMean.js';
import { redactUrlsInText } from '../secrets/redactUrl.js';
import type { CliCommand, CliIO } from './CliCommand.js';
import { discoverCommands, loadDiscoveredCommand, renamedCommandNotice } from './commandDiscovery.js';
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

/**
 * Prints an error. A kernel has already redacted the credentials it knows of; the user info of any URL left in the
 * text (a command's own option, a library's message) is redacted here.
 */
function reportError(error: unknown, io: CliIO, verbose: boolean): number {
  const write = (text: string) => io.stderr.write(redactUrlsInText(text));
  if (DrmasError.is(error)) {
    write(`${error.format()}\n`);
    if (verbose) {
      let cause: unknown = error;
      while (cause instanceof Error) {
        write(`${cause.stack}\n`);
        cause = cause.cause;
      }
    }
    return 1;
  }
  const message = error instanceof Error ? error.message : String(error);
  write(`error INTERNAL: ${message}\n`);
  if (verbose && error instanceof Error) write(`${error.stack}\n`);
  else write('  hint: this is a bug in drmas or a plugin; run again with --verbose and report the stack trace\n');
  return 70;
}

/** Why node:util's parseArgs refused the arguments, as a DrmasError naming the option or argument at fault. */
function usageError(error: unknown, command: CliCommand, args: readonly string[]): DrmasError {
  // parseArgs explains some refusals over several lines; the first says what is wrong.
  const message = (error as Error).message.split('\n')[0]!;
  const code = (error as { code?: string }).code;
  const option = /--[\w-]+/.exec(message)?.[0] ?? /'(-\w)'/.exec(message)?.[1];
  const known = Object.keys(command.options).map((o) => `--${o}`);
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    const argument = /'([^']*)'/.exec(message)?.[1] ?? '';
    return new DrmasError('INVALID_ARGUMENT', `drmas ${command.name} takes no argument "${argument}"`, {
      key: argument || command.name,
      hint: `options start with --; \`drmas ${command.name} --help\` lists them (usage: ${command.usage})`,
    });
  }
  // parseArgs calls an option followed by a dash argument ambiguous: a forgotten value (`--seed --k 4`) or one that
  // starts with '-' (`--seed -1`), which reads as an option unless joined with '='.
  const next = option ? args[args.indexOf(option) + 1] : undefined;
  if (option && next !== undefined && code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && message.includes('ambiguous')) {
    if (/^--?[a-z]/i.test(next)) {
      return new DrmasError('INVALID_ARGUMENT', `${option} takes a value, but ${next} follows it`, {
        key: option,
        hint: `give ${option} its value before ${next} (usage: ${command.usage})`,
      });
    }
    return new DrmasError('INVALID_ARGUMENT', `${option} takes a value, and what follows it ("${next}") starts with "-"`, {
      key: option,
      hint: `write a value that starts with "-" joined by "=": ${option}=${next} (usage: ${command.usage})`,
    });
  }
  const suggestion = option && code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? didYouMean(option, known).trim() : '';
  return new DrmasError('INVALID_ARGUMENT', message.replace(/\.\s*$/, ''), {
    key: option ?? command.name,
    hint: suggestion || `\`drmas ${command.name} --help\` lists the options (usage: ${command.usage})`,
  });
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
  const listed = (): Listed[] => [...commands, ...discoverCommands(io.cwd).filter((d) => !commands.some((c) => c.name === d.name))];
  if (name === '-h' || name === '--help' || name === 'help') {
    io.stdout.write(`${mainHelp(listed())}\n`);
    return 0;
  }
  if (!name) {
    const error = new DrmasError('INVALID_ARGUMENT', 'no command given', {
      key: 'command',
      hint: 'name one of the commands below, e.g. drmas train',
    });
    io.stderr.write(`${error.format()}\n\n${mainHelp(listed())}\n`);
    return 1;
  }
  if (name === '-v' || name === '--version') {
    const { createRequire } = await import('node:module');
    const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };
    io.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  const contributed = discoverCommands(io.cwd).filter((d) => !commands.some((c) => c.name === d.name));
  const all: Listed[] = [...commands, ...contributed];
  let command = commands.find((c) => c.name === name);
  const discovered = contributed.find((d) => d.name === name);
  if (!command && discovered) {
    const notice = renamedCommandNotice(discovered);
    if (notice) io.stderr.write(`${notice}\n`);
    try {
      command = await loadDiscoveredCommand(discovered);
    } catch (error) {
      return reportError(error, io, verbose);
    }
  }
  if (!command) {
    const names = all.map((c) => c.name);
    const error = new DrmasError('INVALID_ARGUMENT', `unknown command "${name}"`, {
      key: name,
      hint: didYouMean(name, names).trim() || `the commands are: ${names.join(', ')}`,
    });
    io.stderr.write(`${error.format()}\n\n${mainHelp(all)}\n`);
    return 1;
  }
  if (rest.includes('-h') || rest.includes('--help')) {
    io.stdout.write(`${commandHelp(command)}\n`);
    return 0;
  }
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args: rest, options: command.options, allowPositionals: command.positionals ?? false, strict: true });
  } catch (error) {
    return reportError(usageError(error, command, rest), io, verbose);
  }
  try {
    return await command.run(parsed, io);
  } catch (error) {
    return reportError(error, io, verbose);
  }
}
