import path from 'node:path';
import { DrmasError, integerOption, type CliCommand, type OptionSpec } from '@drmas/core';
import { generateKnowledgeBase } from '../corpus/KnowledgeBase.js';
import { loadCorpusJsonl } from '../corpus/jsonlLoaders.js';
import { DataFileError, SearchInputError } from '../errors.js';
import { Bm25Retriever } from '../retrieval/Bm25Retriever.js';
import type { SearchDocument } from '../retrieval/Retriever.js';
import {
  RETRIEVER_LIMIT_CEILINGS,
  RETRIEVER_SERVER_LIMITS,
  startRetrieverServer,
  type RetrieverServerLimits,
  type RunningRetrieverServer,
} from '../http/retrieverServer.js';

/** The synthetic knowledge base is for trying things out; it takes about 4 s and 300 MB at this size. */
const MAX_ENTITIES = 100_000;

interface LimitFlag {
  flag: string;
  key: keyof RetrieverServerLimits;
  arg: string;
  text: string;
}

/** One option per server limit, in help order; each shows its default. */
const LIMIT_FLAGS: LimitFlag[] = [
  { flag: 'max-body-bytes', key: 'maxBodyBytes', arg: 'N', text: 'largest request body in bytes; larger ones get 413' },
  { flag: 'max-queries', key: 'maxQueries', arg: 'N', text: 'most queries in one request' },
  { flag: 'max-topk', key: 'maxTopk', arg: 'K', text: 'largest topk a request may ask for' },
  {
    flag: 'max-response-bytes',
    key: 'maxResponseBytes',
    arg: 'N',
    text: 'largest response in bytes; a request that would get more gets 400',
  },
  {
    flag: 'max-json-depth',
    key: 'maxJsonDepth',
    arg: 'N',
    text: "deepest nesting of arrays and objects in a request body; Search-R1's needs 2",
  },
  { flag: 'max-connections', key: 'maxConnections', arg: 'N', text: 'open connections at once; more are closed on arrival' },
  { flag: 'headers-timeout', key: 'headersTimeoutMs', arg: 'MS', text: "time to receive a request's headers" },
  { flag: 'request-timeout', key: 'requestTimeoutMs', arg: 'MS', text: 'time to receive a whole request, body included' },
  { flag: 'idle-timeout', key: 'idleTimeoutMs', arg: 'MS', text: 'time a connection may stay silent while a request is read or answered' },
  {
    flag: 'keep-alive-timeout',
    key: 'keepAliveTimeoutMs',
    arg: 'MS',
    text: 'time an idle keep-alive connection waits for its next request',
  },
  { flag: 'max-requests-per-socket', key: 'maxRequestsPerSocket', arg: 'N', text: 'requests on one keep-alive connection' },
  { flag: 'shutdown-grace', key: 'shutdownGraceMs', arg: 'MS', text: 'on SIGINT/SIGTERM, time for requests in flight to finish' },
];

const FLAG_OF_ARGUMENT = new Map<string, string>([
  ['port', '--port'],
  ['host', '--host'],
  ['defaultTopk', '--topk'],
  ['latencyMs', '--latency-ms'],
  ...LIMIT_FLAGS.map((l): [string, string] => [l.key, `--${l.flag}`]),
]);

/** `--key`'s value as a whole number from `min` to `max`, or `fallback` when it is not given. */
function integer(values: Record<string, unknown>, key: string, fallback: number, min: number, max: number): number {
  return integerOption(values, key, { min, max, example: fallback }) ?? fallback;
}

async function loadDocuments(values: Record<string, unknown>, cwd: string): Promise<SearchDocument[]> {
  if (values.corpus === undefined) {
    return generateKnowledgeBase({
      seed: integer(values, 'seed', 0, 0, 2 ** 31 - 1),
      entities: integer(values, 'entities', 120, 12, MAX_ENTITIES),
    }).documents;
  }
  const given = values.corpus as string;
  if (given.trim() === '') {
    throw new DrmasError('INVALID_ARGUMENT', 'is empty; give the path of a Search-R1 corpus JSONL file', {
      key: '--corpus',
      hint: 'leave --corpus out to serve the synthetic knowledge base',
    });
  }
  const file = path.resolve(cwd, given);
  const documents = await loadCorpusJsonl(file).catch((error: unknown) => {
    throw DrmasError.is(error) ? error.at('--corpus') : error;
  });
  if (documents.length === 0) {
    throw new DataFileError(file, 0, undefined, 'holds no documents', {
      hint: 'give a file with one {"id", "contents"} object per line',
    }).at('--corpus');
  }
  return documents;
}

/** Waits for SIGINT or SIGTERM, then stops the server gracefully; a second signal drops what is left at once. */
function stopOnSignal(server: RunningRetrieverServer, log: (line: string) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      const forced = (again: NodeJS.Signals) => {
        log(`drmas: ${again} again: dropping the ${server.inFlight()} request(s) in flight`);
        void server.close({ graceMs: 0 });
      };
      process.once('SIGINT', forced);
      process.once('SIGTERM', forced);
      log(
        `drmas: ${signal}: retriever stops accepting connections; ${server.inFlight()} request(s) in flight get up to ${server.limits.shutdownGraceMs} ms (a second signal stops at once)`,
      );
      server
        .close()
        .then(() => {
          process.off('SIGINT', forced);
          process.off('SIGTERM', forced);
          log('drmas: retriever stopped');
          resolve();
        })
        .catch(reject);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

const LIMIT_OPTIONS: OptionSpec = Object.fromEntries(LIMIT_FLAGS.map((l) => [l.flag, { type: 'string' as const }]));

/**
 * `drmas retriever serve`: the Search-R1 / Dr. MAS retriever API (`POST /retrieve`) over BM25, on a corpus JSONL
 * (`{id, contents}` lines) or the synthetic knowledge base, so an external retriever and ours are interchangeable.
 */
export const retriever: CliCommand = {
  name: 'retriever',
  summary: 'serve the Search-R1 retriever API (POST /retrieve) over BM25: drmas retriever serve',
  usage: 'drmas retriever serve [--port 8000] [--host 127.0.0.1] [--corpus FILE.jsonl | --entities N --seed S] [--topk 3] [limits]',
  help: [
    ['--port N', 'port to listen on (default 8000; 0 picks a free one)'],
    ['--host H', 'address to bind (default 127.0.0.1)'],
    ['--corpus FILE', 'Search-R1 corpus JSONL ({"id", "contents"} lines); default: the synthetic knowledge base'],
    ['--entities N', `entities of the synthetic knowledge base (default 120, as env.entities; at most ${MAX_ENTITIES})`],
    ['--seed S', 'seed of the synthetic knowledge base (default 0, as env.seed)'],
    ['--topk K', 'documents per query when a request gives no topk (default 3)'],
    ['--latency-ms MS', 'wait MS before searching each request, as a remote search API would (default 0; for benchmarks)'],
    ...LIMIT_FLAGS.map((l): [string, string] => [`--${l.flag} ${l.arg}`, `${l.text} (default ${RETRIEVER_SERVER_LIMITS[l.key]})`]),
  ],
  options: {
    port: { type: 'string' },
    host: { type: 'string' },
    corpus: { type: 'string' },
    entities: { type: 'string' },
    seed: { type: 'string' },
    topk: { type: 'string' },
    'latency-ms': { type: 'string' },
    ...LIMIT_OPTIONS,
  },
  positionals: true,
  async run({ values, positionals }, io) {
    if (positionals[0] !== 'serve' || positionals.length !== 1) {
      throw new DrmasError('INVALID_ARGUMENT', `unknown retriever action "${positionals.join(' ')}"`, {
        key: 'retriever',
        hint: 'use: drmas retriever serve --port 8000',
      });
    }
    // options first: a typo in a limit should not wait for a large corpus to load
    const port = integer(values, 'port', 8000, 0, 65535);
    const host = (values.host as string | undefined) ?? '127.0.0.1';
    if (host.trim() === '') throw new DrmasError('INVALID_ARGUMENT', 'is empty', { key: '--host', hint: 'e.g. --host 127.0.0.1' });
    const limits: Partial<RetrieverServerLimits> = {};
    for (const l of LIMIT_FLAGS)
      limits[l.key] = integer(values, l.flag, RETRIEVER_SERVER_LIMITS[l.key], 1, RETRIEVER_LIMIT_CEILINGS[l.key]);
    const maxTopk = limits.maxTopk!;
    const defaultTopk = integer(values, 'topk', Math.min(3, maxTopk), 1, maxTopk);
    const latencyMs = integer(values, 'latency-ms', 0, 0, 60_000);
    if (limits.headersTimeoutMs! > limits.requestTimeoutMs!) {
      throw new DrmasError(
        'INVALID_ARGUMENT',
        `${limits.headersTimeoutMs} ms is longer than --request-timeout (${limits.requestTimeoutMs} ms)`,
        {
          key: '--headers-timeout',
          hint: 'the headers are part of the request: give --headers-timeout <= --request-timeout',
        },
      );
    }
    const documents = await loadDocuments(values, io.cwd);
    const server = await startRetrieverServer({
      retriever: new Bm25Retriever(documents),
      port,
      host,
      defaultTopk,
      latencyMs,
      ...limits,
    }).catch((error: unknown) => {
      if (!(error instanceof SearchInputError)) throw error;
      // the option's name replaces the argument's at the head of the message
      const message = error.message.slice(error.argument.length + 2);
      throw new DrmasError(error.code, message, {
        key: FLAG_OF_ARGUMENT.get(error.argument) ?? error.argument,
        hint: error.hint,
        cause: error,
      });
    });
    const log = (line: string) => io.stderr.write(`${line}\n`);
    const l = server.limits;
    log(
      `drmas: retriever on ${server.url}/retrieve over ${documents.length} documents${latencyMs > 0 ? `, answering after ${latencyMs} ms` : ''} (Ctrl-C stops it)`,
    );
    log(
      `drmas: limits: body ${l.maxBodyBytes} B, ${l.maxQueries} queries, topk ${l.maxTopk}, response ${l.maxResponseBytes} B, ` +
        `${l.maxConnections} connections, request ${l.requestTimeoutMs} ms, idle ${l.idleTimeoutMs} ms (drmas retriever --help)`,
    );
    await stopOnSignal(server, log);
    return 0;
  },
};
