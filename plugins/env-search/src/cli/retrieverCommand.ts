import path from 'node:path';
import { DrmasError, type CliCommand } from '@drmas/core';
import { generateKnowledgeBase } from '../corpus/KnowledgeBase.js';
import { loadCorpusJsonl } from '../corpus/jsonlLoaders.js';
import { Bm25Retriever } from '../retrieval/Bm25Retriever.js';
import { startRetrieverServer } from '../http/retrieverServer.js';

function integer(values: Record<string, unknown>, key: string, fallback: number, min: number): number {
  if (values[key] === undefined) return fallback;
  const value = Number(values[key]);
  if (!Number.isInteger(value) || value < min) {
    throw new DrmasError('INVALID_ARGUMENT', `--${key} expects an integer >= ${min}, got ${JSON.stringify(values[key])}`, {
      key: `--${key}`,
    });
  }
  return value;
}

/**
 * `drmas retriever serve`: the Search-R1 / Dr. MAS retriever API (`POST /retrieve`) over BM25, on a corpus JSONL
 * (`{id, contents}` lines) or the synthetic knowledge base, so an external retriever and ours are interchangeable.
 */
export const retriever: CliCommand = {
  name: 'retriever',
  summary: 'serve the Search-R1 retriever API (POST /retrieve) over BM25: drmas retriever serve',
  usage: 'drmas retriever serve [--port 8000] [--host 127.0.0.1] [--corpus FILE.jsonl | --entities N --seed S] [--topk 3]',
  help: [
    ['--port N', 'port to listen on (default 8000; 0 picks a free one)'],
    ['--host H', 'address to bind (default 127.0.0.1)'],
    ['--corpus FILE', 'Search-R1 corpus JSONL ({"id", "contents"} lines); default: the synthetic knowledge base'],
    ['--entities N', 'entities of the synthetic knowledge base (default 120, as env.entities)'],
    ['--seed S', 'seed of the synthetic knowledge base (default 0, as env.seed)'],
    ['--topk K', 'documents per query when a request gives no topk (default 3)'],
  ],
  options: {
    port: { type: 'string' },
    host: { type: 'string' },
    corpus: { type: 'string' },
    entities: { type: 'string' },
    seed: { type: 'string' },
    topk: { type: 'string' },
  },
  positionals: true,
  async run({ values, positionals }, io) {
    if (positionals[0] !== 'serve' || positionals.length !== 1) {
      throw new DrmasError('INVALID_ARGUMENT', `unknown retriever action "${positionals.join(' ')}"`, {
        key: 'retriever',
        hint: 'use: drmas retriever serve --port 8000',
      });
    }
    const documents = values.corpus
      ? await loadCorpusJsonl(path.resolve(io.cwd, values.corpus as string)).catch((error: unknown) => {
          throw DrmasError.is(error) ? error.at('--corpus') : error;
        })
      : generateKnowledgeBase({ seed: integer(values, 'seed', 0, 0), entities: integer(values, 'entities', 120, 12) }).documents;
    const server = await startRetrieverServer({
      retriever: new Bm25Retriever(documents),
      port: integer(values, 'port', 8000, 0),
      host: (values.host as string | undefined) ?? '127.0.0.1',
      defaultTopk: integer(values, 'topk', 3, 1),
    });
    io.stderr.write(`drmas: retriever on ${server.url}/retrieve over ${documents.length} documents (Ctrl-C stops it)\n`);
    await new Promise<void>((resolve) => {
      const stop = () => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        resolve();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await server.close();
    return 0;
  },
};
