import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CONFIG_OPTIONS, DrmasError, integerOption, type CliCommand } from '@drmas/core';
import { DEFAULT_FUTURE_POLICY, type FuturePolicy } from '../server/FutureQueue.js';
import { openLocalEngines } from '../server/localEngines.js';
import { TinkerServer } from '../server/TinkerServer.js';
import { TrainingModels } from '../server/TrainingModels.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);
const DEFAULTS = { host: '127.0.0.1', port: 8000, seed: 0 } as const;
const MAX_MS = 86_400_000;

export const tinkerServerCommand: CliCommand = {
  name: 'tinker-server',
  summary: "a Tinker-API training server (create_model, forward_backward, optim_step, asample, futures) over drmas's own engines",
  usage:
    'drmas tinker-server [--engine auto|onnx|tfjs] [--config PATH] [--port 8000] [--host 127.0.0.1] [--data-dir DIR] [--seed 0] [future options]',
  help: [
    [
      '--engine E',
      'the engine models train on: auto (default; onnx where onnxruntime-node loads, else tfjs, as for training), or its name',
    ],
    [
      '-c, --config PATH',
      "take the engines this config's plugins and presets load (default: drmas's own, onnx and tfjs, where installed); --set KEY=VALUE overrides it",
    ],
    ['--port N', `port to listen on (default ${DEFAULTS.port}; 0: a free port, printed)`],
    ['--host H', `address to listen on (default ${DEFAULTS.host}: this machine only)`],
    ['--api-key-env NAME', 'require the key in this environment variable as X-API-Key (default: no key)'],
    ['--data-dir DIR', 'where saved weights go, kept (default: a new temporary folder, removed when the server stops)'],
    ['--seed N', `initialisation seed of built-in base models (tiny, small; default ${DEFAULTS.seed})`],
    ['--delay-ms MS', 'wait before each request starts, so futures are polled while pending (default 0)'],
    ['--hold-ms MS', `how long retrieve_future waits for a running request (default ${DEFAULT_FUTURE_POLICY.holdMs})`],
    ['--pending try_again|408', `how a still-running request is answered (default ${DEFAULT_FUTURE_POLICY.pending}, as SkyRL)`],
    ['--keep-ms MS', `how long results are kept before retrieve_future answers 410 (default ${DEFAULT_FUTURE_POLICY.keepMs})`],
    ['--expire-after-ms MS', 'with --expire-count: that many results expire after MS instead'],
    ['--expire-count N', 'how many results expire after --expire-after-ms (default 0)'],
  ],
  options: {
    ...CONFIG_OPTIONS,
    engine: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    'api-key-env': { type: 'string' },
    'data-dir': { type: 'string' },
    seed: { type: 'string' },
    'delay-ms': { type: 'string' },
    'hold-ms': { type: 'string' },
    pending: { type: 'string' },
    'keep-ms': { type: 'string' },
    'expire-after-ms': { type: 'string' },
    'expire-count': { type: 'string' },
  },
  async run({ values }, io) {
    const pending = (values.pending as string | undefined) ?? DEFAULT_FUTURE_POLICY.pending;
    if (pending !== 'try_again' && pending !== '408') {
      throw new DrmasError('INVALID_ARGUMENT', `--pending must be try_again or 408, got ${JSON.stringify(pending)}`, { key: '--pending' });
    }
    const ms = (name: string, fallback: number) => integerOption(values, name, { min: 0, max: MAX_MS, example: 1000 }) ?? fallback;
    const policy: FuturePolicy = {
      delayMs: ms('delay-ms', DEFAULT_FUTURE_POLICY.delayMs),
      holdMs: ms('hold-ms', DEFAULT_FUTURE_POLICY.holdMs),
      pending,
      failures: DEFAULT_FUTURE_POLICY.failures,
      keepMs: ms('keep-ms', DEFAULT_FUTURE_POLICY.keepMs),
      expire: {
        afterMs: ms('expire-after-ms', 0),
        count: integerOption(values, 'expire-count', { min: 0, max: 1_000_000, example: 1 }) ?? 0,
      },
    };
    const port = integerOption(values, 'port', { min: 0, max: 65535, example: DEFAULTS.port }) ?? DEFAULTS.port;
    const seed = integerOption(values, 'seed', { min: 0, max: 2 ** 31 - 1, example: 0 }) ?? DEFAULTS.seed;
    const host = (values.host as string | undefined) ?? DEFAULTS.host;
    const keyEnv = values['api-key-env'] as string | undefined;
    const apiKey = keyEnv === undefined ? undefined : process.env[keyEnv];
    if (keyEnv !== undefined && !apiKey) {
      throw new DrmasError('INVALID_ARGUMENT', `environment variable ${keyEnv} is empty`, {
        key: '--api-key-env',
        hint: `export ${keyEnv}=<a key> first`,
      });
    }
    const log = (message: string) => io.stderr.write(`drmas: ${message}\n`);
    const givenDir = values['data-dir'] as string | undefined;
    // A folder of its own holds what only this server can address (tinker:// paths), and may hold gigabytes of
    // checkpoints: it goes when the server stops.
    const dataDir = givenDir === undefined ? await mkdtemp(path.join(os.tmpdir(), 'drmas-tinker-')) : path.resolve(io.cwd, givenDir);
    try {
      const engines = await openLocalEngines({
        cwd: io.cwd,
        configPath: values.config as string | undefined,
        overrides: values.set as string[] | undefined,
        engine: values.engine as string | undefined,
        seed,
        log,
        dataDir,
      });
      const server = new TinkerServer(new TrainingModels(engines.open, dataDir, ['tiny', 'small']), { host, port, apiKey, policy });
      const url = await server.start();
      if (!LOOPBACK.has(host) && !apiKey) log(`listening on ${host} with no API key: anyone who can reach it can train and sample`);
      const stopped = new Promise<string>((resolve) => {
        process.once('SIGINT', () => resolve('SIGINT'));
        process.once('SIGTERM', () => resolve('SIGTERM'));
      });
      try {
        const kept = givenDir === undefined ? ', a temporary folder removed when the server stops; --data-dir keeps them' : '';
        io.stdout.write(
          `tinker-server listening at ${url} (engine ${engines.name}, full-weight training: LoRA ranks are accepted but not applied; weights in ${dataDir}${kept})\n`,
        );
        log(`${await stopped}: stopping`);
      } finally {
        await server.stop();
      }
    } finally {
      if (givenDir === undefined) await rm(dataDir, { recursive: true, force: true });
    }
    return 0;
  },
};

export default tinkerServerCommand;
