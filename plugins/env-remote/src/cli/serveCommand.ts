import * as grpc from '@grpc/grpc-js';
import { CONFIG_HELP, CONFIG_OPTIONS, DrmasError, integerOption, type CliCommand } from '@drmas/core';
import { EnvironmentServer, SERVER_DEFAULTS } from '../server/EnvironmentServer.js';
import { loadServedEnvironments } from '../server/servedEnvironments.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** Waits for SIGINT or SIGTERM; a second one while stopping cuts the calls in flight at once. */
function untilSignal(server: EnvironmentServer, graceMs: number, log: (line: string) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      const forced = () => void server.close(0);
      process.once('SIGINT', forced);
      process.once('SIGTERM', forced);
      log(`${signal}: the server stops accepting calls; calls in flight get up to ${graceMs} ms (a second signal stops at once)`);
      server
        .close(graceMs)
        .then(() => {
          process.off('SIGINT', forced);
          process.off('SIGTERM', forced);
          log('server stopped');
          resolve();
        })
        .catch(reject);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/**
 * `drmas serve --environments math,code --port 50051`: hosts environment plugins over gRPC
 * (`proto/drmas_env.proto`) for training runs whose `env.name` is `remote`.
 */
export const serve: CliCommand = {
  name: 'serve',
  summary: 'host environments over gRPC for remote training runs: drmas serve --environments math --port 50051',
  usage:
    'drmas serve --environments NAME[,NAME...] [--port 50051] [--host 127.0.0.1] [--config PATH] [--set KEY=VALUE ...] [--idle-timeout MS]',
  help: [
    ['--environments LIST', 'environments to host, comma-separated (math, code, search, ...: plugin env-<name>), or plugin names'],
    ['--port N', `port to listen on (default ${SERVER_DEFAULTS.port}; 0: a free port, printed)`],
    ['--host H', `address to listen on (default ${SERVER_DEFAULTS.host}: this machine only; the service has no authentication)`],
    ...CONFIG_HELP.map(([flag, text]): [string, string] =>
      flag.includes('--config')
        ? [flag, 'a training config: its plugins and env settings serve the environments it provides (default: none)']
        : [flag, text],
    ),
    ['--idle-timeout MS', `close a session no call touched for this long (default ${SERVER_DEFAULTS.idleTimeoutMs})`],
    ['--max-sessions N', `sessions open at once at most (default ${SERVER_DEFAULTS.maxSessions})`],
    ['--shutdown-grace MS', 'on SIGINT/SIGTERM, time for calls in flight to finish (default 5000)'],
  ],
  options: {
    ...CONFIG_OPTIONS,
    environments: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    'idle-timeout': { type: 'string' },
    'max-sessions': { type: 'string' },
    'shutdown-grace': { type: 'string' },
  },
  async run({ values }, io) {
    const log = (line: string) => io.stderr.write(`drmas: ${line}\n`);
    const given = values.environments as string | undefined;
    const names = (given ?? '')
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n !== '');
    if (names.length === 0) {
      throw new DrmasError('INVALID_ARGUMENT', given === undefined ? 'is required' : 'names no environment', {
        key: '--environments',
        hint: 'e.g. drmas serve --environments math,code --port 50051',
      });
    }
    const port = integerOption(values, 'port', { min: 0, max: 65535, example: SERVER_DEFAULTS.port }) ?? SERVER_DEFAULTS.port;
    const host = (values.host as string | undefined) ?? SERVER_DEFAULTS.host;
    if (host.trim() === '') throw new DrmasError('INVALID_ARGUMENT', 'is empty', { key: '--host', hint: 'e.g. --host 127.0.0.1' });
    const idleTimeoutMs =
      integerOption(values, 'idle-timeout', { min: 10, max: 86_400_000, example: SERVER_DEFAULTS.idleTimeoutMs }) ??
      SERVER_DEFAULTS.idleTimeoutMs;
    const maxSessions = integerOption(values, 'max-sessions', { min: 1, max: 10_000_000, example: 1000 }) ?? SERVER_DEFAULTS.maxSessions;
    const graceMs = integerOption(values, 'shutdown-grace', { min: 0, max: 600_000, example: 5000 }) ?? 5000;

    const { environments } = await loadServedEnvironments({
      cwd: io.cwd,
      names,
      configPath: values.config as string | undefined,
      overrides: values.set as string[] | undefined,
    });
    if (!LOOPBACK.has(host)) {
      log(
        `listening on ${host}: anyone who can reach it can open sessions and read the tasks, answers included (no authentication, no TLS)`,
      );
    }
    // grpc-js would print its own line on a failed bind ("No address added ..."); the error below says it better.
    grpc.setLogVerbosity(grpc.logVerbosity.NONE);
    const server = await EnvironmentServer.start({ environments, host, port, idleTimeoutMs, maxSessions });
    const served = [...environments].map(
      ([name, e]) =>
        `${name} (${e.environment.test().length} held-out tasks, at most ${e.environment.maxRounds} round${e.environment.maxRounds === 1 ? '' : 's'} per episode)`,
    );
    log(`serving ${served.join(', ')}; idle sessions close after ${idleTimeoutMs} ms (Ctrl-C stops)`);
    io.stdout.write(`environment server listening at ${server.address}\n`);
    await untilSignal(server, graceMs, log);
    return 0;
  },
};
