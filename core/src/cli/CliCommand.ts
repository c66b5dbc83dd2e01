import type { ParseArgsConfig } from 'node:util';

export interface CliIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  cwd: string;
}

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

/** One `drmas <name>` subcommand. */
export interface CliCommand {
  name: string;
  summary: string;
  usage: string;
  /** Option descriptions for --help, in display order. */
  help: Array<[flag: string, text: string]>;
  options: OptionSpec;
  /** Whether the command takes positional arguments. */
  positionals?: boolean;
  run(args: { values: Record<string, unknown>; positionals: string[] }, io: CliIO): Promise<number>;
}

/** Options every command that reads a config accepts. */
export const CONFIG_OPTIONS: OptionSpec = {
  config: { type: 'string', short: 'c' },
  set: { type: 'string', multiple: true },
};

export const CONFIG_HELP: Array<[string, string]> = [
  ['-c, --config PATH', 'config file (default: search drmas.config.*, .drmasrc*, package.json#drmas from here up)'],
  ['--set KEY=VALUE', "override a config key, e.g. --set trainer.steps=3 (repeatable; values coerced to the key's type)"],
];
