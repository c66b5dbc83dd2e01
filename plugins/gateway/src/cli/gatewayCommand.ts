import { CONFIG_HELP, CONFIG_OPTIONS, createKernel, integerOption, numberOption, type CliCommand } from '@drmas/core';
import { Gateway, GATEWAY_DEFAULTS } from '../Gateway.js';
import { DEFAULT_SESSION_IDLE_MS } from '../capture/Sessions.js';

/** A week: longer idling is a session nobody will come back to. */
const MAX_SESSION_IDLE_S = 7 * 24 * 3600;
/** More rows per call than a CPU engine holds at once is no gain; the bound keeps a typo from asking for it. */
const MAX_BATCH = 1024;
const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export const gatewayCommand: CliCommand = {
  name: 'gateway',
  summary: "an OpenAI-compatible server over a run's models, recording token ids and log-probs per session",
  usage:
    'drmas gateway --config PATH [--port 8000] [--host 127.0.0.1] [--batch-window-ms 5] [--max-batch 32] [--session-idle-s 1800] [--set KEY=VALUE ...]',
  help: [
    ...CONFIG_HELP,
    ['--port N', `port to listen on (default ${GATEWAY_DEFAULTS.port}; 0: a free port, printed)`],
    ['--host H', `address to listen on (default ${GATEWAY_DEFAULTS.host}: this machine only; the server has no authentication)`],
    ['--batch-window-ms MS', `how long a request waits for others to share its engine call (default ${GATEWAY_DEFAULTS.windowMs})`],
    ['--max-batch N', `requests per engine call at most (default ${GATEWAY_DEFAULTS.maxBatch})`],
    ['--session-idle-s S', `free a capture session untouched for S seconds, with its turns (default ${DEFAULT_SESSION_IDLE_MS / 1000})`],
  ],
  options: {
    ...CONFIG_OPTIONS,
    port: { type: 'string' },
    host: { type: 'string' },
    'batch-window-ms': { type: 'string' },
    'max-batch': { type: 'string' },
    'session-idle-s': { type: 'string' },
  },
  async run({ values }, io) {
    const port = integerOption(values, 'port', { min: 0, max: 65535, example: GATEWAY_DEFAULTS.port }) ?? GATEWAY_DEFAULTS.port;
    const windowMs = numberOption(values, 'batch-window-ms', { min: 0, max: 10_000, example: 5 }) ?? GATEWAY_DEFAULTS.windowMs;
    const maxBatch = integerOption(values, 'max-batch', { min: 1, max: MAX_BATCH, example: 32 }) ?? GATEWAY_DEFAULTS.maxBatch;
    const idleS = numberOption(values, 'session-idle-s', { min: 0.001, max: MAX_SESSION_IDLE_S, example: 1800 });
    const host = (values.host as string | undefined) ?? GATEWAY_DEFAULTS.host;
    const log = (message: string) => io.stderr.write(`drmas: ${message}\n`);
    const { kernel } = await createKernel({
      cwd: io.cwd,
      configPath: values.config as string | undefined,
      overrides: values.set as string[] | undefined,
    });
    if (!LOOPBACK.has(host)) log(`listening on ${host}: anyone who can reach it can sample and read sessions (no authentication)`);
    const sessionIdleMs = idleS === undefined ? undefined : Math.round(idleS * 1000);
    const gateway = await Gateway.open(kernel, { host, port, windowMs, maxBatch, log, sessionIdleMs });
    const stopped = new Promise<string>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    try {
      io.stdout.write(`gateway listening at ${gateway.url}/v1 (models: ${gateway.server.models.names().join(', ')})\n`);
      log(`${await stopped}: stopping`);
    } finally {
      await gateway.close();
    }
    return 0;
  },
};
